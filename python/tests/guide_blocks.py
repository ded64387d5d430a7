"""The ```python blocks of a Markdown page, for the tests that run a guide's examples as written."""
import re


def python_blocks(page):
    """(heading, index under that heading, code) for each ```python block of `page` (a Path), the
    heading being the nearest `##` or `###` line above it ("" before any)."""
    blocks, heading, counts = [], "", {}
    for match in re.finditer(r"^#{2,3} ([^\n]+)$|^```python\n(.*?)^```$", page.read_text(), re.M | re.S):
        if match.group(1):
            heading = match.group(1)
            continue
        index = counts.get(heading, 0)
        counts[heading] = index + 1
        blocks.append((heading, index, match.group(2)))
    return blocks
