"""A block of a document as a reader sees it: a heading, a paragraph, a list item or code.

Its own module because every reading of a document makes blocks (.doc_blocks and the parser of
each format) and .block_repair repairs them: each imports it from here, none from another.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("heading", "paragraph", "item", "code")


@dataclass(frozen=True)
class Block:
    kind: str  # KINDS
    text: str  # clean prose; a code block's code
    level: int = 0  # a heading's level, 1-6
    language: str = ""  # a code block's language, as its fence says

    @property
    def rendered(self) -> str:
        """How the block reads in a passage: Markdown a reviewer reads as it is."""
        if self.kind == "heading":
            return "#" * max(1, min(self.level, 6)) + " " + self.text
        if self.kind == "code":
            return f"```{self.language}\n{self.text}\n```"
        return self.text
