// Tandem's stand-in for `typebox/value` (and `@sinclair/typebox/value`): checking, defaults,
// conversion and cleaning of plain values against JSON Schema objects.

import { applyDefaults, check, cleanValue, collectErrors, convertValue, createValue, deepEqualValues } from "./schema-check.mjs";

export class AssertError extends Error {
	constructor(schema, value, errors) {
		const first = errors[0];
		super(first ? `${first.path || "/"}: ${first.message}` : "Value does not match the schema");
		this.name = "AssertError";
		this.schema = schema;
		this.value = value;
		this.errors = errors;
	}
	Errors() {
		return this.errors;
	}
}

// TypeBox's functions take an optional `references` array first; accept both call shapes.
function args(list) {
	return list.length >= 3 ? [list[1], list[2]] : [list[0], list[1]];
}

export function Check(...list) {
	const [schema, value] = args(list);
	return check(schema, value);
}

export function Errors(...list) {
	const [schema, value] = args(list);
	const errors = collectErrors(schema, value);
	return Object.assign(errors, {
		First: () => errors[0],
	});
}

export function Assert(...list) {
	const [schema, value] = args(list);
	const errors = collectErrors(schema, value);
	if (errors.length > 0) throw new AssertError(schema, value, errors);
}

export function Clone(value) {
	return value === undefined ? undefined : structuredClone(value);
}

export function Create(...list) {
	const schema = list.length >= 2 ? list[1] : list[0];
	return createValue(schema);
}

export function Default(...list) {
	const [schema, value] = args(list);
	return applyDefaults(schema, value);
}

export function Convert(...list) {
	const [schema, value] = args(list);
	return convertValue(schema, value);
}

export function Clean(...list) {
	const [schema, value] = args(list);
	return cleanValue(schema, value);
}

export function Equal(left, right) {
	return deepEqualValues(left, right);
}

export function Hash(value) {
	const text = JSON.stringify(value) ?? "undefined";
	let hash = 0xcbf29ce484222325n;
	for (let i = 0; i < text.length; i++) {
		hash ^= BigInt(text.charCodeAt(i));
		hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
	}
	return hash;
}

export function Parse(...list) {
	const [schema, value] = args(list);
	const result = Clean(schema, Convert(schema, Default(schema, Clone(value))));
	Assert(schema, result);
	return result;
}

/** Codecs are not applied (as for pi's tool arguments): values pass through after checking. */
export function Decode(...list) {
	const [schema, value] = args(list);
	Assert(schema, value);
	return value;
}

export function Encode(...list) {
	const [schema, value] = args(list);
	Assert(schema, value);
	return value;
}

export function Cast(...list) {
	const [schema, value] = args(list);
	const converted = Convert(schema, Default(schema, Clone(value)));
	return check(schema, converted) ? converted : createValue(schema);
}

export function Diff(left, right) {
	return Equal(left, right) ? [] : [{ type: "update", path: "", value: right }];
}

export function Patch(_left, edits) {
	const last = edits[edits.length - 1];
	return last?.value;
}

export function Mutate(target, source) {
	for (const key of Object.keys(target)) delete target[key];
	Object.assign(target, source);
}

export const Value = {
	Assert,
	Cast,
	Check,
	Clean,
	Clone,
	Convert,
	Create,
	Decode,
	Default,
	Diff,
	Encode,
	Equal,
	Errors,
	Hash,
	Mutate,
	Parse,
	Patch,
};

export default Value;
