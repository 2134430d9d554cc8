import type { SessionMessage, StoredAttachment } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { CLEARED_NOTE } from '../sessions/prune-history.ts';
import { toModelMessages } from './model-view.ts';

const image: StoredAttachment = { sha256: 'a'.repeat(64), mimeType: 'image/png', size: 2048, path: '/w/logo.png' };
const pdf: StoredAttachment = { sha256: 'b'.repeat(64), mimeType: 'application/pdf', size: 10, path: '/w/spec.pdf' };
const media = new Map([
  [image.sha256, 'SU1BR0U='],
  [pdf.sha256, 'UERG'],
]);

function step(attachments: StoredAttachment[], output = 'read (attached).'): SessionMessage[] {
  return [
    { id: 'u', at: 't', role: 'user', text: 'look' },
    {
      id: 'a',
      at: 't',
      role: 'assistant',
      text: '',
      toolCalls: [{ toolCallId: 'c1', toolName: 'read_file', args: { path: 'logo.png' } }],
      model: 'm',
    },
    { id: 't', at: 't', role: 'tool', toolCallId: 'c1', toolName: 'read_file', output, attachments },
  ];
}

describe('the model view of tool attachments', () => {
  it('puts images and PDFs inside the tool result for a provider that takes them there', () => {
    const messages = toModelMessages(step([image, pdf]), {
      support: { images: true, pdf: true, inToolResults: true },
      media,
    });
    expect(messages).toHaveLength(3);
    expect(messages[2]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'read_file',
          output: {
            type: 'content',
            value: [
              { type: 'text', text: 'read (attached).' },
              { type: 'image-data', data: 'SU1BR0U=', mediaType: 'image/png' },
              { type: 'file-data', data: 'UERG', mediaType: 'application/pdf', filename: 'spec.pdf' },
            ],
          },
        },
      ],
    });
  });

  it('shows a model that sees images but not PDFs the image, and says the PDF was not shown', () => {
    const messages = toModelMessages(step([image, pdf]), {
      support: { images: true, pdf: false, inToolResults: false },
      media,
    });
    const tool = messages[2];
    expect(JSON.stringify(tool)).toContain(
      'a PDF document (application/pdf, 10 bytes, spec.pdf) that this model cannot see',
    );
    expect(messages[3]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Attachments of the tool results above:' },
        { type: 'image', image: 'SU1BR0U=', mediaType: 'image/png' },
      ],
    });
  });

  it('says an attachment is no longer stored instead of pretending it is shown', () => {
    const messages = toModelMessages(step([image]), {
      support: { images: true, pdf: true, inToolResults: false },
      media: new Map(),
    });
    expect(messages).toHaveLength(3);
    expect(JSON.stringify(messages[2])).toContain('an image (image/png, 2 KB, logo.png), but it is no longer stored');
  });

  it('shows nothing of a result cleared to save context', () => {
    const messages = toModelMessages(step([image], CLEARED_NOTE), {
      support: { images: true, pdf: true, inToolResults: false },
      media,
    });
    expect(messages).toHaveLength(3);
    expect(JSON.stringify(messages)).not.toContain('SU1BR0U=');
    expect(JSON.stringify(messages[2])).not.toContain('cannot see');
  });
});
