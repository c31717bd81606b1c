// The lines `vane bundles diff` prints, as a list: `+` added, `-` removed, `~` changed.
import type { VNode } from "preact";
import { html } from "htm/preact";

export function DiffLines(props: { id: string; label: string; lines: readonly string[] }): VNode {
  return html`<ul class="diff" id=${props.id} aria-label=${props.label}>
    ${props.lines.map((line) => html`<li class=${{ "+": "added", "-": "removed", "~": "changed" }[line[0]!] ?? ""}><code>${line}</code></li>`)}
  </ul>`;
}
