// A child for token-handover.test.ts: receives its tokens, reports them, then asks again as a
// process that somehow got hold of the channel could.
import { receiveTokensFromParent, TOKENS_FROM_PARENT_ENV } from '../token-handover.ts';

const tokens = await receiveTokensFromParent();
process.send?.({ type: 'received', tokens, variableLeft: process.env[TOKENS_FROM_PARENT_ENV] ?? null });
process.env[TOKENS_FROM_PARENT_ENV] = '1';
const again = await receiveTokensFromParent({ timeoutMs: 1_000 }).then(
  () => 'answered',
  (error: { code?: string }) => error.code,
);
process.send?.({ type: 'again', outcome: again });
