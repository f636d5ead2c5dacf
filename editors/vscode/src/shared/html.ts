// Fills media/chat.html's placeholders. The extension and the browser test use the same
// template and this same function, so the test loads the webview's real page.

export interface PageVars {
    cspSource: string;
    nonce: string;
    scriptUri: string;
    styleUri: string;
}

export function fillTemplate(template: string, vars: PageVars): string {
    return template.replace(/\{\{(\w+)\}\}/g, (whole, name: string) =>
        Object.prototype.hasOwnProperty.call(vars, name) ? String(vars[name as keyof PageVars]) : whole,
    );
}

/** A random nonce for the page's Content-Security-Policy. */
export function makeNonce(): string {
    const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let out = "";
    for (let i = 0; i < 32; i++) out += chars[Math.floor(Math.random() * chars.length)];
    return out;
}
