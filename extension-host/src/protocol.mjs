// JSON-RPC 2.0 over lines (EXTENSIONS.md "Transport"): messages are read from stdin and written
// to the file descriptor in TANDEM_EXTENSION_OUTPUT_FD, else to stdout. Both directions may have
// requests pending at once.

import * as fs from "node:fs";
import * as net from "node:net";
import { createInterface } from "node:readline";

export const ErrorCodes = {
	ParseError: -32700,
	InvalidRequest: -32600,
	MethodNotFound: -32601,
	InvalidParams: -32602,
	InternalError: -32603,
	/** The handler of a request failed (a tool or command threw). */
	HandlerFailed: -32000,
	/** The request was cancelled with `$/cancelRequest`. */
	RequestCancelled: -32800,
};

export class RpcError extends Error {
	constructor(code, message, data) {
		super(message);
		this.code = code;
		this.data = data;
	}
}

/** JSON text for a message; values JSON cannot hold (BigInt, cycles) are replaced, not fatal. */
export function toJson(value) {
	try {
		return JSON.stringify(value);
	} catch {
		const seen = new WeakSet();
		return JSON.stringify(value, (_key, v) => {
			if (typeof v === "bigint") return v.toString();
			if (typeof v === "object" && v !== null) {
				if (seen.has(v)) return "[Circular]";
				seen.add(v);
			}
			return v;
		});
	}
}

/** A writer of protocol lines on `fd`: a socket for pipes and sockets, synchronous writes otherwise. */
function createWriter(fd, fallbackWrite) {
	if (fallbackWrite) return { write: fallbackWrite, end: (done) => done() };
	let stat;
	try {
		stat = fs.fstatSync(fd);
	} catch (error) {
		throw new Error(`TANDEM_EXTENSION_OUTPUT_FD=${fd} is not an open file descriptor (${error.message})`);
	}
	if (stat.isFIFO() || stat.isSocket()) {
		const socket = new net.Socket({ fd, readable: false, writable: true });
		socket.on("error", (error) => {
			process.stderr.write(`extension host: protocol output failed: ${error.message}\n`);
			process.exit(1);
		});
		return { write: (text) => socket.write(text), end: (done) => socket.end(done) };
	}
	return {
		write: (text) => {
			const buffer = Buffer.from(text, "utf8");
			let offset = 0;
			while (offset < buffer.length) {
				try {
					offset += fs.writeSync(fd, buffer, offset);
				} catch (error) {
					if (error.code !== "EAGAIN") throw error;
				}
			}
		},
		end: (done) => done(),
	};
}

export class Connection {
	/**
	 * @param {object} options
	 * @param {number} [options.outputFd] where protocol lines go
	 * @param {(text: string) => void} [options.write] write function to use instead (stdout's)
	 * @param {NodeJS.ReadableStream} options.input
	 */
	constructor({ outputFd, write, input }) {
		this.writer = createWriter(outputFd, write);
		this.input = input;
		this.nextId = 1;
		this.pending = new Map();
		this.requestHandler = undefined;
		this.notificationHandler = undefined;
		this.closeHandler = undefined;
		this.beforeSend = undefined;
	}

	onRequest(handler) {
		this.requestHandler = handler;
	}

	onNotification(handler) {
		this.notificationHandler = handler;
	}

	onClose(handler) {
		this.closeHandler = handler;
	}

	start() {
		const lines = createInterface({ input: this.input, crlfDelay: Number.POSITIVE_INFINITY });
		lines.on("line", (line) => this.receive(line));
		lines.on("close", () => {
			for (const { reject } of this.pending.values()) reject(new Error("Tandem closed the connection"));
			this.pending.clear();
			this.closeHandler?.();
		});
	}

	send(message) {
		this.writer.write(`${toJson({ jsonrpc: "2.0", ...message })}\n`);
	}

	notify(method, params) {
		this.send(params === undefined ? { method } : { method, params });
	}

	/** Sends a request; resolves with its result, rejects with an RpcError. */
	request(method, params, { signal } = {}) {
		const id = this.nextId++;
		return new Promise((resolve, reject) => {
			const entry = { resolve, reject, method };
			this.pending.set(id, entry);
			if (signal) {
				const onAbort = () => {
					if (!this.pending.has(id)) return;
					this.pending.delete(id);
					this.notify("$/cancelRequest", { id });
					reject(Object.assign(new Error("aborted"), { name: "AbortError" }));
				};
				if (signal.aborted) {
					queueMicrotask(onAbort);
				} else {
					signal.addEventListener("abort", onAbort, { once: true });
					entry.cleanup = () => signal.removeEventListener("abort", onAbort);
				}
			}
			this.send({ id, method, params });
		});
	}

	respond(id, result) {
		this.beforeSend?.();
		this.send({ id, result: result === undefined ? null : result });
	}

	respondError(id, code, message, data) {
		this.beforeSend?.();
		const error = { code, message };
		if (data !== undefined) error.data = data;
		this.send({ id, error });
	}

	receive(line) {
		if (line.trim() === "") return;
		let message;
		try {
			message = JSON.parse(line);
		} catch {
			process.stderr.write(`extension host: ignoring a line that is not JSON: ${line.slice(0, 200)}\n`);
			this.send({ id: null, error: { code: ErrorCodes.ParseError, message: "Parse error" } });
			return;
		}
		if (!message || typeof message !== "object" || message.jsonrpc !== "2.0") {
			process.stderr.write(`extension host: ignoring a message that is not JSON-RPC 2.0: ${line.slice(0, 200)}\n`);
			return;
		}
		if (typeof message.method === "string") {
			if (message.id !== undefined && message.id !== null) this.requestHandler?.(message.id, message.method, message.params);
			else this.notificationHandler?.(message.method, message.params);
			return;
		}
		if (message.id !== undefined) {
			const entry = this.pending.get(message.id);
			if (!entry) return;
			this.pending.delete(message.id);
			entry.cleanup?.();
			if (message.error) entry.reject(new RpcError(message.error.code, message.error.message, message.error.data));
			else entry.resolve(message.result);
		}
	}

	close() {
		return new Promise((resolve) => this.writer.end(resolve));
	}
}
