// API keys the user enters in VS Code ("Tandem: Set API Key"). Each key lives in VS Code's
// SecretStorage (the OS keychain where there is one), never in settings or logs. The server gets
// it the way it gets any key, in the provider's environment variable when it starts: the
// variable names come from the server (`tandem/models/list` entries' `keyEnv`), so the table
// lives in one place.

import * as vscode from "vscode";

import type { ModelInfo } from "../shared/protocol";

/** Which providers have a stored key, and the variables to put it in (no secrets here). */
const INDEX = "tandem.apiKeys";
const secretName = (provider: string) => `tandem.apiKey.${provider}`;

type Index = Record<string, string[]>;

/** One provider the user can enter a key for. */
export type KeyedProvider = { provider: string; keyEnv: string[]; available: boolean };

/** The providers of `models` whose key the server reads from the environment, sorted. */
export function keyedProviders(models: readonly ModelInfo[]): KeyedProvider[] {
    const byProvider = new Map<string, KeyedProvider>();
    for (const m of models) {
        if (!m.keyEnv?.length) continue;
        const seen = byProvider.get(m.provider);
        if (seen) seen.available ||= m.available !== false;
        else byProvider.set(m.provider, { provider: m.provider, keyEnv: [...m.keyEnv], available: m.available !== false });
    }
    return [...byProvider.values()].sort((a, b) => a.provider.localeCompare(b.provider));
}

/**
 * `base` with each stored key in its provider's variables: the last listed variable (the plain
 * API key one, e.g. ANTHROPIC_API_KEY after ANTHROPIC_OAUTH_TOKEN) gets the key and the others
 * are removed, so the key the user entered here is the one the server uses.
 */
export function environmentWithKeys(base: NodeJS.ProcessEnv, keys: ReadonlyArray<{ keyEnv: string[]; key: string }>): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...base };
    for (const { keyEnv, key } of keys) {
        if (keyEnv.length === 0) continue;
        for (const name of keyEnv) delete env[name];
        env[keyEnv[keyEnv.length - 1]!] = key;
    }
    return env;
}

export class ApiKeys {
    constructor(private readonly context: vscode.ExtensionContext) {}

    private index(): Index {
        return this.context.globalState.get<Index>(INDEX) ?? {};
    }

    /** The providers with a stored key. */
    providers(): string[] {
        return Object.keys(this.index()).sort();
    }

    async store(provider: KeyedProvider, key: string): Promise<void> {
        await this.context.secrets.store(secretName(provider.provider), key);
        await this.context.globalState.update(INDEX, { ...this.index(), [provider.provider]: provider.keyEnv });
    }

    async forget(provider: string): Promise<void> {
        await this.context.secrets.delete(secretName(provider));
        const { [provider]: _gone, ...rest } = this.index();
        await this.context.globalState.update(INDEX, rest);
    }

    /** The server's environment: this process's, with every stored key in place. */
    async environment(): Promise<NodeJS.ProcessEnv> {
        const keys: { keyEnv: string[]; key: string }[] = [];
        for (const [provider, keyEnv] of Object.entries(this.index())) {
            const key = await this.context.secrets.get(secretName(provider));
            if (key) keys.push({ keyEnv, key });
        }
        return environmentWithKeys(process.env, keys);
    }
}
