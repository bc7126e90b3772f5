// Types of csp.js (plain JS: serve.js runs it without a build).
export function consoleCsp(urls?: { apiUrl?: string; livekitUrl?: string }): string;
