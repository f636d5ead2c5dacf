// How often each document's diagnostics changed (its generation), and the wait of a
// `tandem/diagnostics` request with `after`: until every listed document has a newer generation
// (or is not analyzed) and no change came for `quietMs`, or `waitMs` ran out.
//
// No VS Code here: the host feeds `bump` from `languages.onDidChangeDiagnostics`, keyed by the
// document's URI string, so the node tests drive it directly.

type Listener = (keys: readonly string[]) => void;

export class DiagnosticGenerations {
    private readonly counts = new Map<string, number>();
    private readonly changedAt = new Map<string, number>();
    private readonly listeners = new Set<Listener>();

    constructor(private readonly now: () => number = Date.now) {}

    /** The diagnostics of `keys` changed. */
    bump(keys: readonly string[]): void {
        const at = this.now();
        for (const key of keys) {
            this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
            this.changedAt.set(key, at);
        }
        for (const listener of [...this.listeners]) listener(keys);
    }

    /** How many times `key`'s diagnostics changed (0: never). */
    generation(key: string): number {
        return this.counts.get(key) ?? 0;
    }

    /**
     * Resolves to true once every key of `after` has a generation above its value (or is
     * `exempt`: not analyzed) and none of them changed for `quietMs`; to false when `waitMs`
     * ran out first.
     */
    settle(after: ReadonlyMap<string, number>, waitMs: number, quietMs: number, exempt: (key: string) => boolean): Promise<boolean> {
        const deadline = this.now() + Math.max(0, waitMs);
        return new Promise((resolve) => {
            let timer: ReturnType<typeof setTimeout> | undefined;
            let done = false;
            const finish = (settled: boolean) => {
                if (done) return;
                done = true;
                if (timer !== undefined) clearTimeout(timer);
                this.listeners.delete(listener);
                resolve(settled);
            };
            const check = () => {
                if (done) return;
                if (timer !== undefined) clearTimeout(timer);
                timer = undefined;
                const now = this.now();
                let newer = true;
                let last = 0;
                for (const [key, seen] of after) {
                    if (!exempt(key) && this.generation(key) <= seen) newer = false;
                    last = Math.max(last, this.changedAt.get(key) ?? 0);
                }
                if (newer && now - last >= quietMs) return finish(true);
                if (now >= deadline) return finish(false);
                const next = newer ? Math.min(deadline, last + quietMs) : deadline;
                timer = setTimeout(check, Math.max(1, next - now));
            };
            const listener: Listener = (keys) => {
                if (keys.some((key) => after.has(key))) check();
            };
            this.listeners.add(listener);
            check();
        });
    }
}
