import type { StoredAttachment } from '@molf/protocol';
import { createResource, onCleanup, Show } from 'solid-js';
import { errorMessage } from '../link/rpc-error.ts';
import { formatSize } from './long-text.tsx';
import { useSession } from './session-context.ts';

/** What the page shows inline: images; other documents are named. */
const INLINE = /^image\/(png|jpeg|gif|webp|avif|bmp)$/;

/** An image or document a tool returned: images shown (read from the session when first on screen). */
export function AttachmentView(props: { attachment: StoredAttachment }) {
  const session = useSession();
  const [url] = createResource(
    () => (INLINE.test(props.attachment.mimeType) && session !== undefined ? props.attachment.sha256 : undefined),
    async (sha256) => {
      if (session === undefined) return undefined;
      const file = await session.link.client.rpc.sessions.attachment.query({ sessionId: session.sessionId, sha256 });
      const bytes = Uint8Array.from(atob(file.base64), (char) => char.charCodeAt(0));
      // SVG is not shown inline (it may carry script); the types above are plain images.
      return URL.createObjectURL(new Blob([bytes], { type: file.mimeType }));
    },
  );
  onCleanup(() => {
    const made = url();
    if (made !== undefined) URL.revokeObjectURL(made);
  });
  const label = () => `${props.attachment.path ?? props.attachment.mimeType} · ${formatSize(props.attachment.size)}`;
  return (
    <figure class="attachment" data-testid="attachment">
      <Show
        when={url()}
        fallback={<span class="muted small">{url.error === undefined ? label() : errorMessage(url.error)}</span>}
      >
        {(src) => <img src={src()} alt={label()} loading="lazy" />}
      </Show>
      <Show when={url()}>
        <figcaption class="muted small">{label()}</figcaption>
      </Show>
    </figure>
  );
}
