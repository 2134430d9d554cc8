// pino-roll ships no types; this covers the part we call.
declare module 'pino-roll' {
  import type { DestinationStream } from 'pino';

  type Options = {
    file: string | (() => string);
    size?: number | string;
    frequency?: number | string;
    mkdir?: boolean;
    limit?: { count: number; removeOtherLogFiles?: boolean };
  };

  export default function build(options: Options): Promise<DestinationStream & { end(): void; flushSync(): void }>;
}
