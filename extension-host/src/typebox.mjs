// Tandem's stand-in for the `typebox` package (and the legacy `@sinclair/typebox`).
//
// Every builder returns a plain JSON Schema object. Markers that are not JSON Schema (the kind of a
// schema, whether a property is optional or readonly) are kept as non-enumerable properties, so
// `JSON.stringify` never shows them and a schema can be sent to Tandem as it is.

import { check, collectErrors } from "./schema-check.mjs";

// Note: this module exports builders named like JavaScript globals (Object, Array, String, ...), so
// inside it those globals are reached through `globalThis`.

// Legacy (TypeBox 0.3x) symbol markers, kept alongside the string markers of TypeBox 1.x.
export const Kind = Symbol.for("TypeBox.Kind");
export const Hint = Symbol.for("TypeBox.Hint");
export const OptionalKind = Symbol.for("TypeBox.Optional");
export const ReadonlyKind = Symbol.for("TypeBox.Readonly");
export const TransformKind = Symbol.for("TypeBox.Transform");

function hidden(target, key, value) {
	globalThis.Object.defineProperty(target, key, { value, writable: true, enumerable: false, configurable: true });
	return target;
}

function copyMarkers(from, to) {
	for (const key of ["~kind", "~optional", "~readonly", Kind, OptionalKind, ReadonlyKind]) {
		if (globalThis.Object.prototype.hasOwnProperty.call(from, key)) hidden(to, key, from[key]);
	}
	return to;
}

/** A shallow copy that keeps the hidden markers. */
function cloneSchema(schema) {
	return copyMarkers(schema, { ...schema });
}

function make(kind, body, options) {
	const schema = { ...body, ...(options ?? {}) };
	hidden(schema, "~kind", kind);
	hidden(schema, Kind, kind);
	return schema;
}

export function IsOptional(schema) {
	return !!schema && (schema["~optional"] === true || schema[OptionalKind] === "Optional");
}

export function IsReadonly(schema) {
	return !!schema && (schema["~readonly"] === true || schema[ReadonlyKind] === "Readonly");
}

export function KindOf(schema) {
	return schema?.["~kind"] ?? schema?.[Kind];
}

// --- primitives -----------------------------------------------------------------------------

export const String = (options) => make("String", { type: "string" }, options);
export const Number = (options) => make("Number", { type: "number" }, options);
export const Integer = (options) => make("Integer", { type: "integer" }, options);
export const Boolean = (options) => make("Boolean", { type: "boolean" }, options);
export const Null = (options) => make("Null", { type: "null" }, options);
export const Any = (options) => make("Any", {}, options);
export const Unknown = (options) => make("Unknown", {}, options);
export const Never = (options) => make("Never", { not: {} }, options);
export const Undefined = (options) => make("Undefined", { type: "undefined" }, options);
export const Void = (options) => make("Void", { type: "void" }, options);
export const BigInt = (options) => make("BigInt", { type: "bigint" }, options);
export const Symbol_ = (options) => make("Symbol", { type: "symbol" }, options);
export { Symbol_ as Symbol };
export const Uint8Array = (options) => make("Uint8Array", { type: "Uint8Array" }, options);
export const Date = (options) => make("Date", { type: "Date" }, options);
export const Function = (parameters, returns, options) =>
	make("Function", { type: "function", parameters, returns }, options);
export const Constructor = (parameters, returns, options) =>
	make("Constructor", { type: "constructor", parameters, returns }, options);
export const Promise = (item, options) => make("Promise", { type: "promise", item }, options);
export const AsyncIterator = (items, options) => make("AsyncIterator", { type: "AsyncIterator", items }, options);
export const Iterator = (items, options) => make("Iterator", { type: "Iterator", items }, options);

export function Literal(value, options) {
	return make("Literal", { type: typeof value, const: value }, options);
}

export function RegExp(pattern, options) {
	const source = typeof pattern === "string" ? pattern : pattern.source;
	return make("String", { type: "string", pattern: source }, options);
}

// --- containers -----------------------------------------------------------------------------

export function Array(items, options) {
	return make("Array", { type: "array", items }, options);
}

export function Object(properties, options) {
	const props = properties ?? {};
	const required = globalThis.Object.keys(props).filter((key) => !IsOptional(props[key]));
	const body = { type: "object" };
	if (required.length > 0) body.required = required;
	body.properties = props;
	return make("Object", body, options);
}

export function Tuple(items, options) {
	const list = items ?? [];
	return make("Tuple", { type: "array", additionalItems: false, items: list, minItems: list.length }, options);
}

export function Union(anyOf, options) {
	if (anyOf.length === 1 && !options) return anyOf[0];
	if (anyOf.length === 0) return Never(options);
	return make("Union", { anyOf }, options);
}

export function Intersect(allOf, options) {
	if (allOf.length === 1 && !options) return allOf[0];
	return make("Intersect", { allOf }, options);
}

/** Legacy `Type.Composite`: the properties of several object schemas merged into one object. */
export function Composite(objects, options) {
	const properties = {};
	for (const object of objects) {
		for (const [key, value] of globalThis.Object.entries(object?.properties ?? {})) properties[key] = value;
	}
	return Object(properties, options);
}

function enumValues(values) {
	if (globalThis.Array.isArray(values)) return values;
	// A TypeScript enum object: numeric enums have reverse mappings, which are not values.
	return globalThis.Object.keys(values)
		.filter((key) => !/^\d+$/.test(key) || typeof values[values[key]] !== "number")
		.map((key) => values[key]);
}

export function Enum(values, options) {
	return make("Enum", { enum: enumValues(values) }, options);
}

function recordKeyPattern(key) {
	const kind = KindOf(key);
	if (kind === "Number") return "^-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?$";
	if (kind === "Integer") return "^-?(?:0|[1-9][0-9]*)$";
	if (key?.pattern) return key.pattern;
	return "^.*$";
}

function literalKeys(key) {
	if (key?.const !== undefined) return [globalThis.String(key.const)];
	if (globalThis.Array.isArray(key?.anyOf) && key.anyOf.every((k) => k.const !== undefined)) {
		return key.anyOf.map((k) => globalThis.String(k.const));
	}
	if (globalThis.Array.isArray(key?.enum)) return key.enum.map((k) => globalThis.String(k));
	return undefined;
}

export function Record(key, value, options) {
	const keys = literalKeys(key);
	if (keys) {
		const properties = {};
		for (const k of keys) properties[k] = value;
		return Object(properties, options);
	}
	return make("Record", { type: "object", patternProperties: { [recordKeyPattern(key)]: value } }, options);
}

// --- modifiers ------------------------------------------------------------------------------

export function Optional(schema, enable = true) {
	const copy = cloneSchema(schema);
	if (enable === false) {
		delete copy["~optional"];
		delete copy[OptionalKind];
		return copy;
	}
	hidden(copy, "~optional", true);
	hidden(copy, OptionalKind, "Optional");
	return copy;
}

export function Readonly(schema, enable = true) {
	const copy = cloneSchema(schema);
	if (enable === false) {
		delete copy["~readonly"];
		delete copy[ReadonlyKind];
		return copy;
	}
	hidden(copy, "~readonly", true);
	hidden(copy, ReadonlyKind, "Readonly");
	return copy;
}

export const ReadonlyOptional = (schema) => Readonly(Optional(schema));

function objectProperties(schema) {
	if (schema?.properties) return schema.properties;
	if (globalThis.Array.isArray(schema?.allOf)) {
		const merged = {};
		for (const part of schema.allOf) globalThis.Object.assign(merged, objectProperties(part));
		return merged;
	}
	return {};
}

function optionsOf(schema) {
	const { type: _type, required: _required, properties: _properties, ...rest } = schema ?? {};
	return rest;
}

export function Partial(schema, options) {
	const properties = {};
	for (const [key, value] of globalThis.Object.entries(objectProperties(schema))) properties[key] = Optional(value);
	return Object(properties, { ...optionsOf(schema), ...(options ?? {}) });
}

export function Required(schema, options) {
	const properties = {};
	for (const [key, value] of globalThis.Object.entries(objectProperties(schema))) properties[key] = Optional(value, false);
	return Object(properties, { ...optionsOf(schema), ...(options ?? {}) });
}

function keyList(keys) {
	if (globalThis.Array.isArray(keys)) return keys.map((k) => globalThis.String(k));
	return literalKeys(keys) ?? [];
}

export function Pick(schema, keys, options) {
	const wanted = new Set(keyList(keys));
	const properties = {};
	for (const [key, value] of globalThis.Object.entries(objectProperties(schema))) {
		if (wanted.has(key)) properties[key] = value;
	}
	return Object(properties, { ...optionsOf(schema), ...(options ?? {}) });
}

export function Omit(schema, keys, options) {
	const unwanted = new Set(keyList(keys));
	const properties = {};
	for (const [key, value] of globalThis.Object.entries(objectProperties(schema))) {
		if (!unwanted.has(key)) properties[key] = value;
	}
	return Object(properties, { ...optionsOf(schema), ...(options ?? {}) });
}

export function KeyOf(schema, options) {
	const keys = globalThis.Object.keys(objectProperties(schema));
	return Union(
		keys.map((key) => Literal(key)),
		options,
	);
}

export function Index(schema, keys, options) {
	const properties = objectProperties(schema);
	const picked = keyList(keys)
		.map((key) => properties[key])
		.filter(Boolean);
	return Union(picked, options);
}

function literalValues(schema) {
	if (schema?.const !== undefined) return [schema];
	if (globalThis.Array.isArray(schema?.anyOf)) return schema.anyOf.flatMap(literalValues);
	return [schema];
}

export function Exclude(left, right, options) {
	const removed = new Set(literalValues(right).map((s) => JSON.stringify(s.const)));
	return Union(
		literalValues(left).filter((s) => !removed.has(JSON.stringify(s.const))),
		options,
	);
}

export function Extract(left, right, options) {
	const kept = new Set(literalValues(right).map((s) => JSON.stringify(s.const)));
	return Union(
		literalValues(left).filter((s) => kept.has(JSON.stringify(s.const))),
		options,
	);
}

export function Ref(ref, options) {
	const target = typeof ref === "string" ? ref : (ref?.$id ?? "");
	return make("Ref", { $ref: target }, options);
}

export function Unsafe(schema) {
	return make("Unsafe", { ...(schema ?? {}) });
}

export function Recursive(callback, options) {
	const id = options?.$id ?? `T${Math.random().toString(36).slice(2, 10)}`;
	const self = make("This", { $ref: id });
	const body = callback(self);
	return make("Recursive", { ...body, $id: id }, options);
}

export const This = (options) => make("This", { $ref: options?.$id ?? "#" });

export function TemplateLiteral(parts, options) {
	if (typeof parts === "string") return make("TemplateLiteral", { type: "string", pattern: `^${parts}$` }, options);
	const pattern = parts
		.map((part) => {
			if (typeof part === "string") return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
			if (part?.const !== undefined) return globalThis.String(part.const).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
			if (globalThis.Array.isArray(part?.anyOf)) return `(?:${part.anyOf.map((p) => globalThis.String(p.const)).join("|")})`;
			if (part?.type === "number" || part?.type === "integer") return "-?[0-9]+(?:\\.[0-9]+)?";
			return ".*";
		})
		.join("");
	return make("TemplateLiteral", { type: "string", pattern: `^${pattern}$` }, options);
}

/** `Type.Refine` checks are not run on tool arguments (as in pi); the schema is kept as it is. */
export function Refine(schema) {
	return schema;
}

/** Codecs do not decode tool arguments (as in pi); the schema is kept as it is. */
export function Codec(schema) {
	const builder = {
		Decode: () => builder,
		Encode: () => schema,
	};
	return builder;
}

export function Transform(schema) {
	const builder = {
		Decode: () => ({ Encode: () => schema }),
		Encode: () => schema,
	};
	return builder;
}

export const Strict = (schema) => JSON.parse(JSON.stringify(schema));
export const Clone = (schema) => cloneSchema(schema);
export const Module = (definitions) => ({
	Import: (name) => definitions[name],
});

// --- the `Type` namespace -------------------------------------------------------------------

export const Type = {
	String,
	Number,
	Integer,
	Boolean,
	Null,
	Any,
	Unknown,
	Never,
	Undefined,
	Void,
	BigInt,
	Symbol: Symbol_,
	Uint8Array,
	Date,
	Function,
	Constructor,
	Promise,
	AsyncIterator,
	Iterator,
	Literal,
	RegExp,
	Array,
	Object,
	Tuple,
	Union,
	Intersect,
	Composite,
	Enum,
	Record,
	Optional,
	Readonly,
	ReadonlyOptional,
	Partial,
	Required,
	Pick,
	Omit,
	KeyOf,
	Index,
	Exclude,
	Extract,
	Ref,
	Unsafe,
	Recursive,
	This,
	TemplateLiteral,
	Refine,
	Codec,
	Transform,
	Strict,
	Module,
};

// --- guards and registries (small subset of TypeBox's) --------------------------------------

const kindGuard = (kind) => (schema) => KindOf(schema) === kind;
export const TypeGuard = {
	IsSchema: (value) => typeof value === "object" && value !== null,
	IsObject: kindGuard("Object"),
	IsString: kindGuard("String"),
	IsNumber: kindGuard("Number"),
	IsInteger: kindGuard("Integer"),
	IsBoolean: kindGuard("Boolean"),
	IsArray: kindGuard("Array"),
	IsUnion: kindGuard("Union"),
	IsLiteral: kindGuard("Literal"),
	IsOptional,
	IsReadonly,
};
export const KindGuard = TypeGuard;
export const IsSchema = TypeGuard.IsSchema;
export const IsObject = TypeGuard.IsObject;
export const IsString = TypeGuard.IsString;
export const IsNumber = TypeGuard.IsNumber;
export const IsInteger = TypeGuard.IsInteger;
export const IsBoolean = TypeGuard.IsBoolean;
export const IsArray = TypeGuard.IsArray;
export const IsUnion = TypeGuard.IsUnion;
export const IsLiteral = TypeGuard.IsLiteral;

const formats = new Map();
export const FormatRegistry = {
	Set: (name, check) => formats.set(name, check),
	Has: (name) => formats.has(name),
	Get: (name) => formats.get(name),
	Delete: (name) => formats.delete(name),
	Clear: () => formats.clear(),
	Entries: () => new Map(formats),
};
export const Format = FormatRegistry;
const kinds = new Map();
export const TypeRegistry = {
	Set: (name, check) => kinds.set(name, check),
	Has: (name) => kinds.has(name),
	Get: (name) => kinds.get(name),
	Delete: (name) => kinds.delete(name),
	Clear: () => kinds.clear(),
	Entries: () => new Map(kinds),
};
export const TypeSystem = {
	Type: (kind, checkFn) => {
		TypeRegistry.Set(kind, checkFn);
		return (options = {}) => make(kind, {}, options);
	},
	Format: (name, checkFn) => {
		FormatRegistry.Set(name, checkFn);
		return name;
	},
};

export class TypeBoxError extends Error {}

/** Checks a value against a schema (what `Value.Check` does). */
export function Check(schema, value) {
	return check(schema, value);
}

export function Errors(schema, value) {
	return collectErrors(schema, value);
}

export default Type;
