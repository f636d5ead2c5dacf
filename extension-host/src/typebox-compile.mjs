// Tandem's stand-in for `typebox/compile` (and the legacy `@sinclair/typebox/compiler`): a
// "compiled" validator is the schema with the checker from schema-check.mjs bound to it.

import { Assert, Clean, Clone, Convert, Default } from "./typebox-value.mjs";
import { check, collectErrors } from "./schema-check.mjs";

export class Validator {
	constructor(schema, references = []) {
		this.schema = schema;
		this.references = references;
	}
	Check(value) {
		return check(this.schema, value, this.references);
	}
	Errors(value) {
		return collectErrors(this.schema, value);
	}
	Parse(value) {
		const result = Clean(this.schema, Convert(this.schema, Default(this.schema, Clone(value))));
		Assert(this.schema, result);
		return result;
	}
	Decode(value) {
		Assert(this.schema, value);
		return value;
	}
	Encode(value) {
		Assert(this.schema, value);
		return value;
	}
	Schema() {
		return this.schema;
	}
	Code() {
		return "";
	}
	IsAccelerated() {
		return false;
	}
}

export function Compile(...list) {
	const schema = list.length >= 2 ? list[1] : list[0];
	const references = list.length >= 2 && Array.isArray(list[0]) ? list[0] : [];
	return new Validator(schema, references);
}

export const TypeCompiler = {
	Compile: (schema, references = []) => new Validator(schema, references),
	Code: () => "",
};

export class TypeCheck extends Validator {}

export default Compile;
