import stringWidth from 'string-width';

/** Where a terminal puts its tab stops: every 8 cells. */
const TAB_STOP = 8;

/** A colour code (SGR): it takes no cell. The CLI's own styling is the only escape sequence a live line holds. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape is what it finds
const SGR = /(\u001b\[[0-9;:]*m)/;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * `line` with its tabs turned into the spaces a terminal would move over (to the next multiple of 8
 * cells): a tab counted as no cell would make the line's rows, and so the region's, miscounted.
 */
export function expandTabs(line: string): string {
  if (!line.includes('\t')) return line;
  let width = 0;
  return line
    .split('\t')
    .map((part, index, parts) => {
      width += stringWidth(part);
      if (index === parts.length - 1) return part;
      const spaces = TAB_STOP - (width % TAB_STOP);
      width += spaces;
      return `${part}${' '.repeat(spaces)}`;
    })
    .join('');
}

/**
 * `line` (tabs expanded) cut into the rows a terminal `columns` wide shows it on, as the terminal
 * wraps it: by cells, a wide character that does not fit on a row's end starting the next one. Each
 * row is then written as a line of its own, so that the rows are known whatever the terminal does.
 */
export function toRows(line: string, columns: number): string[] {
  if (stringWidth(line) <= columns) return [line];
  const rows: string[] = [];
  let row = '';
  let width = 0;
  for (const part of line.split(SGR)) {
    if (SGR.test(part)) {
      row += part;
      continue;
    }
    for (const { segment } of graphemes.segment(part)) {
      const cells = stringWidth(segment);
      if (width + cells > columns && width > 0) {
        rows.push(row);
        row = '';
        width = 0;
      }
      row += segment;
      width += cells;
    }
  }
  rows.push(row);
  return rows;
}
