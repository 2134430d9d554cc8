import { APICallError, RetryError } from 'ai';

/** What providers say when a request is longer than the model's context window. */
const CONTEXT_OVERFLOW =
  /context[ _-]?length|context window|maximum context|too many tokens|prompt is too long|input is too long|token limit|exceeds the (?:maximum|limit)|reduce the length/i;

/** Whether a provider refused the request as longer than the model's context window. */
export function isContextOverflow(error: unknown): boolean {
  const body = (error as { responseBody?: unknown }).responseBody;
  return CONTEXT_OVERFLOW.test(
    `${error instanceof Error ? error.message : String(error)} ${typeof body === 'string' ? body : ''}`,
  );
}

/**
 * The reason phrases of the statuses model providers answer with (node:http's table belongs to the
 * transport layer; 529 is Anthropic's own "overloaded"). Another status is shown as its number.
 */
const STATUS_REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  529: 'Overloaded',
};

/** How much of a provider's own message a description keeps. */
const MAX_MESSAGE_CHARS = 300;

const REDACTED = '[redacted]';

/**
 * Credentials as they appear in free text: an `Authorization` (or `Proxy-Authorization`) header's
 * value, `api-key`/`x-api-key`/`x-goog-api-key` headers, and `key=`/`api_key=`/`token=` pairs.
 */
const CREDENTIAL_TEXT = [
  /\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?)(?!\[redacted\])(?:(?:bearer|basic|token)\s+)?[^\s"',;}]+/gi,
  /\b((?:x-goog-|x-)?api[-_]?key["']?\s*[:=]\s*["']?)(?!\[redacted\])[^\s"',;&}]+/gi,
  /\b(bearer\s+)(?!\[redacted\])[A-Za-z0-9._~+/=-]{4,}/gi,
  /([?&](?:key|api[-_]?key|access[-_]?token|token|sig|signature)=)(?!\[redacted\])[^&\s"':]+/gi,
];

/** Query parameters whose value is a credential. */
const SECRET_PARAMETER = /^(?:key|api[-_]?key|access[-_]?token|token|auth|sig|signature|secret|password)$/i;

/** `text` with every known secret value and anything shaped like a credential replaced. */
export function redactProviderText(text: string, secrets: readonly string[]): string {
  let redacted = text;
  // Longest first, so a secret that contains another is replaced whole. Very short values (a
  // header of "1") would blank out ordinary words and protect nothing.
  for (const secret of [...secrets].filter((value) => value.length >= 4).sort((a, b) => b.length - a.length)) {
    redacted = redacted.replaceAll(secret, REDACTED);
  }
  for (const pattern of CREDENTIAL_TEXT) redacted = redacted.replace(pattern, `$1${REDACTED}`);
  return redacted;
}

/** The endpoint without user info or credential query parameters. */
function toShownUrl(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (parsed.username !== '' || parsed.password !== '') {
    parsed.username = REDACTED;
    parsed.password = '';
  }
  for (const name of [...parsed.searchParams.keys()]) {
    if (SECRET_PARAMETER.test(name)) parsed.searchParams.set(name, REDACTED);
  }
  // URLSearchParams percent-encodes the brackets; the marker reads better as it is.
  return parsed.href.replaceAll(encodeURIComponent(REDACTED), REDACTED);
}

/** The message inside a provider's error body (OpenAI, Anthropic and Google all nest it in `error`), else the body. */
function bodyMessage(body: string | undefined): string | undefined {
  if (body === undefined || body.trim() === '') return undefined;
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown; detail?: unknown };
    const inner = parsed.error;
    if (typeof inner === 'string') return inner;
    if (typeof inner === 'object' && inner !== null && typeof (inner as { message?: unknown }).message === 'string') {
      return (inner as { message: string }).message;
    }
    if (typeof parsed.message === 'string') return parsed.message;
    if (typeof parsed.detail === 'string') return parsed.detail;
  } catch {
    // Not JSON: an HTML error page or plain text, shown as it is (cut).
  }
  return body;
}

function cut(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= MAX_MESSAGE_CHARS ? line : `${line.slice(0, MAX_MESSAGE_CHARS - 1)}…`;
}

/** Why a request never got an answer, from the network error under the SDK's "Cannot connect to API". */
function describeNetworkFailure(error: APICallError): string {
  const cause = error.cause as { code?: unknown; message?: unknown; cause?: { code?: unknown } } | undefined;
  const code = typeof cause?.code === 'string' ? cause.code : cause?.cause?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused (nothing listens there)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'the connection timed out';
    case 'ECONNRESET':
      return 'the connection was reset';
    default:
      return typeof cause?.message === 'string' ? cause.message : error.message;
  }
}

/**
 * A failed model call as people read it, naming the provider, the HTTP status and the endpoint:
 * `provider openai answered 401 Unauthorized at https://api.openai.com/v1/chat/completions: <its
 * message>`, or `provider local could not be reached at …: connection refused`. Never the key:
 * `secrets` (the provider's key and header values) and anything shaped like a credential are
 * replaced by `[redacted]`, in the URL and the provider's message alike.
 */
export function describeProviderError(
  error: unknown,
  options: { provider: string; secrets?: readonly string[] },
): string {
  const secrets = options.secrets ?? [];
  // The SDK retries 429s, 5xx and network errors once and then wraps the last failure.
  const attempts = RetryError.isInstance(error) ? error.errors.length : 1;
  const last = RetryError.isInstance(error) ? error.lastError : error;
  const tries = attempts > 1 ? ` (${attempts} attempts)` : '';
  if (APICallError.isInstance(last)) {
    const at = toShownUrl(last.url);
    if (last.statusCode === undefined) {
      return redactProviderText(
        `provider ${options.provider} could not be reached at ${at}: ${describeNetworkFailure(last)}${tries}`,
        secrets,
      );
    }
    const reason = STATUS_REASONS[last.statusCode];
    const status = reason === undefined ? String(last.statusCode) : `${last.statusCode} ${reason}`;
    const message = cut(bodyMessage(last.responseBody) ?? last.message);
    return redactProviderText(`provider ${options.provider} answered ${status} at ${at}: ${message}${tries}`, secrets);
  }
  const message = last instanceof Error ? last.message : String(last);
  return redactProviderText(`provider ${options.provider}: ${cut(message)}${tries}`, secrets);
}
