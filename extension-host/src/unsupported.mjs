// Exports that exist so extension modules importing them load, but that Tandem's extension host
// does not provide (they need pi's own agent, session or model machinery). Calling one throws an
// error that names it.

export class NotSupportedError extends Error {
	constructor(what) {
		super(`${what} is not available in Tandem's extension host`);
		this.name = "NotSupportedError";
	}
}

/** `{ name: function that throws }` for each name. */
export function unsupportedFunctions(pkg, names) {
	const result = {};
	for (const name of names) {
		result[name] = {
			[name]() {
				throw new NotSupportedError(`${name}() from ${pkg}`);
			},
		}[name];
	}
	return result;
}

/** `{ name: class whose constructor throws }` for each name (static methods throw too). */
export function unsupportedClasses(pkg, names, base = Object) {
	const result = {};
	for (const name of names) {
		const cls = {
			[name]: class extends base {
				constructor() {
					super();
					throw new NotSupportedError(`${name} from ${pkg}`);
				}
			},
		}[name];
		result[name] = cls;
	}
	return result;
}
