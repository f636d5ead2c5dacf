// `withFileMutationQueue(path, fn)`: runs `fn` after every earlier queued mutation of the same
// file has finished. Paths are made absolute and, for files that exist, canonical (so two names of
// one file share a queue). Different files are not serialized against each other.

import { realpath } from "node:fs/promises";
import { resolve } from "node:path";

const tails = new Map();
// Keys are computed one registration at a time, so two calls for one file queue in call order.
let registrations = Promise.resolve();

async function keyFor(filePath) {
	const absolute = resolve(String(filePath));
	try {
		return await realpath(absolute);
	} catch (error) {
		if (error && (error.code === "ENOENT" || error.code === "ENOTDIR")) return absolute;
		throw error;
	}
}

export async function withFileMutationQueue(filePath, fn) {
	const registration = registrations.then(async () => {
		const key = await keyFor(filePath);
		const previous = tails.get(key) ?? Promise.resolve();
		let release;
		const done = new Promise((r) => {
			release = r;
		});
		const tail = previous.then(() => done);
		tails.set(key, tail);
		return { key, previous, tail, release };
	});
	registrations = registration.then(
		() => undefined,
		() => undefined,
	);
	const { key, previous, tail, release } = await registration;
	await previous;
	try {
		return await fn();
	} finally {
		release();
		if (tails.get(key) === tail) tails.delete(key);
	}
}
