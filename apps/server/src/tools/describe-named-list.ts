/** Text made safe inside an XML-ish element or attribute of a tool description or result. */
export function escapeXml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/**
 * A tool description that lists what the tool can load or run, one line each (the only context they
 * cost until used): `intro`, then `<skills><skill name="…">description</skill>…</skills>`.
 */
export function describeNamedList(
  intro: string,
  element: 'skill' | 'agent',
  entries: readonly { name: string; description: string }[],
): string {
  return [
    intro,
    `<${element}s>`,
    ...entries.map((entry) => `<${element} name="${entry.name}">${escapeXml(entry.description)}</${element}>`),
    `</${element}s>`,
  ].join('\n');
}
