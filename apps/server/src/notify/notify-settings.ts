import { z } from 'zod';

/** How long the links of a notification answer, by default. */
export const DEFAULT_LINK_TTL_MINUTES = 10;

/** `fetch` refuses header values beyond Latin-1, and a line break would end the header. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** RFC 9110 `token`. */
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

function httpUrl(what: string) {
  return z.string().transform((text, context) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      context.addIssue({ code: 'custom', message: `${what} must be an http(s) URL, e.g. https://host/path` });
      return z.NEVER;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      context.addIssue({ code: 'custom', message: `${what} must use http or https, not ${url.protocol}` });
      return z.NEVER;
    }
    if (url.username !== '' || url.password !== '') {
      // A URL's user info ends up in logs and error messages; credentials belong in headers/token.
      context.addIssue({ code: 'custom', message: `${what} must not hold a user or password: use headers or token` });
      return z.NEVER;
    }
    return url.href;
  });
}

/** A generic webhook: the approval as JSON, POSTed to `url`. */
export const WebhookTargetSchema = z.strictObject({
  type: z.literal('webhook'),
  url: httpUrl('a webhook url'),
  /** Sent with every request (e.g. `Authorization`); never logged. Default none. */
  headers: z
    .record(
      z.string().regex(HEADER_NAME, "a header name is letters, digits and !#$%&'*+.^_`|~-"),
      z.string().regex(HEADER_VALUE, 'a header value is one line of Latin-1 text'),
    )
    .optional(),
});

/** A topic of an ntfy server: a phone notification with Approve and Deny buttons. */
export const NtfyTargetSchema = z.strictObject({
  type: z.literal('ntfy'),
  /** The topic's URL, e.g. `http://ntfy.lan/molf-approvals`. */
  url: httpUrl('an ntfy topic url'),
  /** An ntfy access token (`tk_…`), sent as `Authorization: Bearer`; never logged. Default none. */
  token: z.string().min(1).regex(HEADER_VALUE, 'a token is one line of Latin-1 text').optional(),
});

export const NotifyTargetSchema = z.discriminatedUnion('type', [WebhookTargetSchema, NtfyTargetSchema], {
  error: (issue) => (issue.code === 'invalid_union' ? 'a target\'s "type" must be "webhook" or "ntfy"' : undefined),
});
export type NotifyTarget = z.infer<typeof NotifyTargetSchema>;

/** The `notify` section of the server config file. */
export const NotifySettingsSchema = z.strictObject({
  /**
   * The base of the approve/deny links, as the person's phone reaches the server (behind a proxy,
   * its public address). Default: the server's own http URL (loopback unless `--host` says otherwise).
   */
  publicUrl: httpUrl('publicUrl')
    .refine((href) => !/[,;"'\s]/.test(href), {
      // ntfy's action header separates fields with , and actions with ;
      message: 'publicUrl must not contain commas, semicolons, quotes or spaces',
    })
    .refine((href) => !href.includes('?') && !href.includes('#'), {
      message: 'publicUrl must not have a query or fragment',
    })
    .optional(),
  /** How long a link answers, in minutes (1–60). Default 10. */
  linkTtlMinutes: z.number().int().min(1).max(60).optional(),
  /** Where each approval request is sent; one request per target. */
  targets: z.array(NotifyTargetSchema).max(16),
});
export type NotifySettings = z.infer<typeof NotifySettingsSchema>;

/** The `notify` settings as the server takes them: the file's, and what tests inject. */
export type NotifyOptions = NotifySettings & {
  /** The clock links are signed and checked with. Default `Date.now`. */
  now?: () => number;
  /** How long a target may take to answer. Default 10 s. */
  timeoutMs?: number;
};
