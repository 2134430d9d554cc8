/**
 * The link that logs a browser into the web client: the token rides in the URL fragment, which
 * browsers never send to a server (nor write to its access logs); the page takes it and drops it
 * from the address bar.
 */
export function webLoginUrl(httpUrl: string, clientToken: string): string {
  return `${httpUrl}/#token=${encodeURIComponent(clientToken)}`;
}
