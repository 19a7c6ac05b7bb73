"""The sidebar's link to this view, with a button that copies it.

Why not `st.code`, whose box has a copy button of its own: its element loads Streamlit's syntax highlighter,
1.5 MB of script, on every page's first visit, for one line of plain text. This element is a few lines of
HTML and script (a Streamlit component, drawn in the page).
"""

from __future__ import annotations

import streamlit as st

LINK_COMPONENT = "encoder_lab_link"
TEST_ID = "labLink"

_HTML = f"""<div class="lab-link" data-testid="{TEST_ID}"><code></code>
<button type="button">Copy link</button><span class="lab-link-done" role="status"></span></div>"""

# Streamlit's theme reaches a component as CSS variables: the box looks like the page's other code boxes.
_CSS = """
.lab-link code {display: block; max-height: 160px; overflow-y: auto; padding: 0.5rem 0.75rem;
  border-radius: 0.5rem; background: var(--st-secondary-background-color); color: var(--st-text-color);
  font-family: var(--st-code-font, monospace); font-size: 0.8rem; line-height: 1.4; word-break: break-all;}
.lab-link button {min-height: 44px; margin-top: 0.5rem; padding: 0 1rem; border-radius: 0.5rem; cursor: pointer;
  border: 1px solid var(--st-border-color); background: var(--st-background-color); color: var(--st-text-color);
  font: inherit;}
.lab-link button:focus-visible {outline: 2px solid var(--st-primary-color);}
.lab-link-done {margin-left: 0.75rem; font-size: 0.875rem;}
"""

# The clipboard API needs a secure page (https, or this machine); over plain http in a hall the link's text is
# selected and copied the older way.
_JS = """export default function ({ data, parentElement }) {
  const code = parentElement.querySelector("code");
  const button = parentElement.querySelector("button");
  const done = parentElement.querySelector(".lab-link-done");
  code.textContent = data.url;
  button.onclick = async () => {
    let copied = false;
    try {
      await navigator.clipboard.writeText(data.url);
      copied = true;
    } catch (error) {
      const range = document.createRange();
      range.selectNodeContents(code);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      copied = document.execCommand("copy");
    }
    done.textContent = copied ? "Copied." : "Selected: copy it with Ctrl+C (⌘C on a Mac).";
  };
}"""

_mount = st.components.v2.component(LINK_COMPONENT, html=_HTML, css=_CSS, js=_JS, isolate_styles=True)


def link_box(url: str) -> None:
    """The link in a box, with its copy button."""
    _mount(data={"url": url})
