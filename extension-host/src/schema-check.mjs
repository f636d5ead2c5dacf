// A small JSON Schema checker for what `typebox/value` and `typebox/compile` offer extensions:
// types, const/enum, anyOf/oneOf/allOf/not, object and array keywords, string and number limits,
// common formats and local `$ref`s. Tandem validates tool arguments itself; this is only for
// extensions that check values on their own.

const FORMATS = {
	email: (s) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s),
	uri: (s) => /^[a-zA-Z][a-zA-Z0-9+.-]*:[^\s]*$/.test(s),
	url: (s) => /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^\s]+$/.test(s),
	uuid: (s) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s),
	date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)),
	time: (s) => /^\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/i.test(s),
	"date-time": (s) => /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(s),
	ipv4: (s) => /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(s),
	ipv6: (s) => /^[0-9a-f:]+$/i.test(s) && s.includes(":"),
	hostname: (s) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(s),
	regex: (s) => {
		try {
			new RegExp(s);
			return true;
		} catch {
			return false;
		}
	},
};

function typeOf(value) {
	if (value === null) return "null";
	if (Array.isArray(value)) return "array";
	if (value instanceof Uint8Array) return "Uint8Array";
	if (value instanceof Date) return "Date";
	return typeof value;
}

function matchesType(type, value) {
	switch (type) {
		case "integer":
			return typeof value === "number" && Number.isInteger(value);
		case "number":
			return typeof value === "number" && Number.isFinite(value);
		case "object":
			return typeof value === "object" && value !== null && !Array.isArray(value);
		case "array":
			return Array.isArray(value);
		case "null":
			return value === null;
		case "undefined":
			return value === undefined;
		case "void":
			return value === undefined || value === null;
		case "function":
		case "constructor":
			return typeof value === "function";
		default:
			return typeOf(value) === type;
	}
}

function deepEqual(a, b) {
	if (a === b) return true;
	if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
	if (Array.isArray(a) !== Array.isArray(b)) return false;
	const ka = Object.keys(a);
	const kb = Object.keys(b);
	if (ka.length !== kb.length) return false;
	return ka.every((k) => deepEqual(a[k], b[k]));
}

function resolveRef(root, ref) {
	if (ref === "#") return root;
	if (ref.startsWith("#/")) {
		let node = root;
		for (const part of ref.slice(2).split("/")) {
			node = node?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
		}
		return node;
	}
	// A `$id` somewhere in the root schema.
	const stack = [root];
	const seen = new Set();
	while (stack.length > 0) {
		const node = stack.pop();
		if (!node || typeof node !== "object" || seen.has(node)) continue;
		seen.add(node);
		if (node.$id === ref) return node;
		for (const value of Object.values(node)) if (value && typeof value === "object") stack.push(value);
	}
	return undefined;
}

function escapePointer(key) {
	return String(key).replace(/~/g, "~0").replace(/\//g, "~1");
}

/**
 * Walks `value` against `schema`, calling `report(path, message)` for each problem. Returns true when
 * the value is valid. `stopAtFirst` makes it return at the first error.
 */
function walk(root, schema, value, path, report, stopAtFirst, depth = 0) {
	if (schema === true || schema === undefined) return true;
	if (schema === false) {
		report(path, "no value is allowed here");
		return false;
	}
	if (typeof schema !== "object" || schema === null) return true;
	if (depth > 64) return true;
	let ok = true;
	const fail = (message) => {
		ok = false;
		report(path, message);
		return stopAtFirst;
	};

	if (typeof schema.$ref === "string") {
		const target = resolveRef(root, schema.$ref);
		if (target && !walk(root, target, value, path, report, stopAtFirst, depth + 1)) {
			ok = false;
			if (stopAtFirst) return false;
		}
	}

	if (schema.type !== undefined) {
		const types = Array.isArray(schema.type) ? schema.type : [schema.type];
		if (!types.some((t) => matchesType(t, value))) {
			if (fail(`expected ${types.join(" or ")}, got ${typeOf(value)}`)) return false;
			return false;
		}
	}
	if (schema.const !== undefined && !deepEqual(schema.const, value)) {
		if (fail(`expected ${JSON.stringify(schema.const)}`)) return false;
	}
	if (Array.isArray(schema.enum) && !schema.enum.some((v) => deepEqual(v, value))) {
		if (fail(`expected one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}`)) return false;
	}
	if (Array.isArray(schema.anyOf)) {
		if (!schema.anyOf.some((s) => walk(root, s, value, path, () => {}, true, depth + 1))) {
			if (fail("matches none of the allowed schemas")) return false;
		}
	}
	if (Array.isArray(schema.oneOf)) {
		const count = schema.oneOf.filter((s) => walk(root, s, value, path, () => {}, true, depth + 1)).length;
		if (count !== 1) {
			if (fail(count === 0 ? "matches none of the allowed schemas" : "matches more than one schema")) return false;
		}
	}
	if (Array.isArray(schema.allOf)) {
		for (const s of schema.allOf) {
			if (!walk(root, s, value, path, report, stopAtFirst, depth + 1)) {
				ok = false;
				if (stopAtFirst) return false;
			}
		}
	}
	if (schema.not !== undefined && walk(root, schema.not, value, path, () => {}, true, depth + 1)) {
		if (fail("matches a schema it must not match")) return false;
	}

	if (typeof value === "string") {
		const length = [...value].length;
		if (typeof schema.minLength === "number" && length < schema.minLength) {
			if (fail(`expected at least ${schema.minLength} characters`)) return false;
		}
		if (typeof schema.maxLength === "number" && length > schema.maxLength) {
			if (fail(`expected at most ${schema.maxLength} characters`)) return false;
		}
		if (typeof schema.pattern === "string") {
			let re;
			try {
				re = new RegExp(schema.pattern, "u");
			} catch {
				re = undefined;
			}
			if (re && !re.test(value)) {
				if (fail(`does not match pattern ${schema.pattern}`)) return false;
			}
		}
		if (typeof schema.format === "string" && FORMATS[schema.format] && !FORMATS[schema.format](value)) {
			if (fail(`is not a valid ${schema.format}`)) return false;
		}
	}

	if (typeof value === "number") {
		if (typeof schema.minimum === "number" && value < schema.minimum) {
			if (fail(`expected >= ${schema.minimum}`)) return false;
		}
		if (typeof schema.maximum === "number" && value > schema.maximum) {
			if (fail(`expected <= ${schema.maximum}`)) return false;
		}
		if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) {
			if (fail(`expected > ${schema.exclusiveMinimum}`)) return false;
		}
		if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) {
			if (fail(`expected < ${schema.exclusiveMaximum}`)) return false;
		}
		if (typeof schema.multipleOf === "number" && schema.multipleOf > 0) {
			const ratio = value / schema.multipleOf;
			if (Math.abs(ratio - Math.round(ratio)) > 1e-9) {
				if (fail(`expected a multiple of ${schema.multipleOf}`)) return false;
			}
		}
	}

	if (Array.isArray(value)) {
		if (typeof schema.minItems === "number" && value.length < schema.minItems) {
			if (fail(`expected at least ${schema.minItems} items`)) return false;
		}
		if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
			if (fail(`expected at most ${schema.maxItems} items`)) return false;
		}
		if (schema.uniqueItems === true) {
			for (let i = 0; i < value.length; i++) {
				for (let j = i + 1; j < value.length; j++) {
					if (deepEqual(value[i], value[j])) {
						if (fail("expected unique items")) return false;
					}
				}
			}
		}
		const tuple = Array.isArray(schema.items) ? schema.items : Array.isArray(schema.prefixItems) ? schema.prefixItems : undefined;
		if (tuple) {
			for (let i = 0; i < value.length; i++) {
				const itemSchema = i < tuple.length ? tuple[i] : typeof schema.additionalItems === "object" ? schema.additionalItems : undefined;
				if (i >= tuple.length && schema.additionalItems === false) {
					if (fail(`expected at most ${tuple.length} items`)) return false;
					break;
				}
				if (itemSchema !== undefined && !walk(root, itemSchema, value[i], `${path}/${i}`, report, stopAtFirst, depth + 1)) {
					ok = false;
					if (stopAtFirst) return false;
				}
			}
		} else if (schema.items !== undefined) {
			for (let i = 0; i < value.length; i++) {
				if (!walk(root, schema.items, value[i], `${path}/${i}`, report, stopAtFirst, depth + 1)) {
					ok = false;
					if (stopAtFirst) return false;
				}
			}
		}
		if (schema.contains !== undefined && !value.some((item) => walk(root, schema.contains, item, path, () => {}, true, depth + 1))) {
			if (fail("contains no matching item")) return false;
		}
	}

	if (typeof value === "object" && value !== null && !Array.isArray(value)) {
		const keys = Object.keys(value);
		if (Array.isArray(schema.required)) {
			for (const key of schema.required) {
				if (value[key] === undefined) {
					ok = false;
					report(`${path}/${escapePointer(key)}`, "missing");
					if (stopAtFirst) return false;
				}
			}
		}
		if (typeof schema.minProperties === "number" && keys.length < schema.minProperties) {
			if (fail(`expected at least ${schema.minProperties} properties`)) return false;
		}
		if (typeof schema.maxProperties === "number" && keys.length > schema.maxProperties) {
			if (fail(`expected at most ${schema.maxProperties} properties`)) return false;
		}
		const properties = schema.properties ?? {};
		const patterns = Object.entries(schema.patternProperties ?? {}).map(([p, s]) => {
			let re;
			try {
				re = new RegExp(p, "u");
			} catch {
				re = /^$/;
			}
			return [re, s];
		});
		for (const key of keys) {
			const child = `${path}/${escapePointer(key)}`;
			let known = false;
			if (Object.prototype.hasOwnProperty.call(properties, key)) {
				known = true;
				if (value[key] !== undefined && !walk(root, properties[key], value[key], child, report, stopAtFirst, depth + 1)) {
					ok = false;
					if (stopAtFirst) return false;
				}
			}
			for (const [re, s] of patterns) {
				if (re.test(key)) {
					known = true;
					if (!walk(root, s, value[key], child, report, stopAtFirst, depth + 1)) {
						ok = false;
						if (stopAtFirst) return false;
					}
				}
			}
			if (!known && schema.additionalProperties !== undefined && schema.additionalProperties !== true) {
				if (schema.additionalProperties === false) {
					ok = false;
					report(child, "unexpected property");
					if (stopAtFirst) return false;
				} else if (!walk(root, schema.additionalProperties, value[key], child, report, stopAtFirst, depth + 1)) {
					ok = false;
					if (stopAtFirst) return false;
				}
			}
		}
	}
	return ok;
}

export function check(schema, value, references = []) {
	const root = references.length > 0 ? { ...schema, $defs: { ...(schema.$defs ?? {}), ...Object.fromEntries(references.map((r) => [r.$id, r])) } } : schema;
	return walk(root, schema, value, "", () => {}, true);
}

export function collectErrors(schema, value) {
	const errors = [];
	walk(schema, schema, value, "", (path, message) => errors.push({ path, instancePath: path, message, schema, value }), false);
	return errors;
}

/** A value for `schema`: its default, or the simplest value of its type. */
export function createValue(schema) {
	if (!schema || typeof schema !== "object") return undefined;
	if (schema.default !== undefined) return structuredClone(schema.default);
	if (schema.const !== undefined) return schema.const;
	if (Array.isArray(schema.enum)) return schema.enum[0];
	if (Array.isArray(schema.anyOf) && schema.anyOf.length > 0) return createValue(schema.anyOf[0]);
	const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
	switch (type) {
		case "string":
			return "";
		case "number":
		case "integer":
			return typeof schema.minimum === "number" ? schema.minimum : 0;
		case "boolean":
			return false;
		case "null":
			return null;
		case "array":
			return Array.isArray(schema.items) ? schema.items.map(createValue) : [];
		case "object": {
			const result = {};
			for (const key of schema.required ?? []) result[key] = createValue(schema.properties?.[key]);
			return result;
		}
		default:
			return undefined;
	}
}

/** Fills in defaults from `schema` where `value` lacks them. */
export function applyDefaults(schema, value) {
	if (!schema || typeof schema !== "object") return value;
	if (value === undefined && schema.default !== undefined) return structuredClone(schema.default);
	if (typeof value === "object" && value !== null && !Array.isArray(value) && schema.properties) {
		for (const [key, sub] of Object.entries(schema.properties)) {
			const next = applyDefaults(sub, value[key]);
			if (next !== undefined) value[key] = next;
		}
	}
	if (Array.isArray(value) && schema.items && !Array.isArray(schema.items)) {
		for (let i = 0; i < value.length; i++) value[i] = applyDefaults(schema.items, value[i]);
	}
	return value;
}

/** Coerces loosely typed values toward `schema` (numeric strings, "true"/"false", single values to arrays). */
export function convertValue(schema, value) {
	if (!schema || typeof schema !== "object") return value;
	const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
	if ((type === "number" || type === "integer") && typeof value === "string" && value.trim() !== "" && !Number.isNaN(Number(value))) {
		return Number(value);
	}
	if (type === "boolean" && typeof value === "string") {
		if (value === "true") return true;
		if (value === "false") return false;
	}
	if (type === "string" && (typeof value === "number" || typeof value === "boolean")) return String(value);
	if (type === "null" && (value === "null" || value === undefined)) return null;
	if (type === "array") {
		const list = Array.isArray(value) ? value : value === undefined ? value : [value];
		if (Array.isArray(list) && schema.items && !Array.isArray(schema.items)) return list.map((item) => convertValue(schema.items, item));
		return list;
	}
	if (type === "object" && typeof value === "object" && value !== null && !Array.isArray(value)) {
		for (const [key, sub] of Object.entries(schema.properties ?? {})) {
			if (key in value) value[key] = convertValue(sub, value[key]);
		}
	}
	return value;
}

/** Removes properties an object schema does not declare, when it forbids additional properties. */
export function cleanValue(schema, value) {
	if (!schema || typeof schema !== "object" || typeof value !== "object" || value === null) return value;
	if (Array.isArray(value)) {
		if (schema.items && !Array.isArray(schema.items)) return value.map((v) => cleanValue(schema.items, v));
		return value;
	}
	const properties = schema.properties ?? {};
	for (const key of Object.keys(value)) {
		if (key in properties) value[key] = cleanValue(properties[key], value[key]);
		else if (schema.additionalProperties === false) delete value[key];
	}
	return value;
}

export function deepEqualValues(a, b) {
	return deepEqual(a, b);
}
