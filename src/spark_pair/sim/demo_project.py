"""The scratch project `spark-pair demo` creates, and the edit the simulated model makes."""

from __future__ import annotations

import difflib

PROMPT = ("validate input lines, add an optional discount to the order total, note it in a "
          "changelog, drop the finished TODO list and rename stock.csv to sample_stock.csv")
MATCH = "discount"
CONTEXT_FILES = ("inventory.py", "test_inventory.py", "README.md", "TODO.txt")

# The project before the turn.
FILES: dict[str, str] = {
    'inventory.py': (
        '"""A tiny inventory: items with a price and a quantity, and an order total."""\n'
        '\n'
        'from dataclasses import dataclass\n'
        '\n'
        '\n'
        '@dataclass\n'
        'class Item:\n'
        '    name: str\n'
        '    price: float\n'
        '    quantity: int\n'
        '\n'
        '\n'
        'def parse_line(line):\n'
        '    name, price, quantity = line.split(",")\n'
        '    return Item(name.strip(), float(price), int(quantity))\n'
        '\n'
        '\n'
        'def load(path):\n'
        '    with open(path) as f:\n'
        '        return [parse_line(line) for line in f if line.strip()]\n'
        '\n'
        '\n'
        'def total(items):\n'
        '    result = 0\n'
        '    for item in items:\n'
        '        result = result + item.price * item.quantity\n'
        '    return result\n'
        '\n'
        '\n'
        'if __name__ == "__main__":\n'
        '    import sys\n'
        '\n'
        '    print(f"total: {total(load(sys.argv[1])):.2f}")\n'
    ),
    'test_inventory.py': (
        'from inventory import Item, parse_line, total\n'
        '\n'
        '\n'
        'def test_parse_line():\n'
        '    assert parse_line("pen, 1.50, 4") == Item("pen", 1.5, 4)\n'
        '\n'
        '\n'
        'def test_total():\n'
        '    assert total([Item("pen", 1.5, 4), Item("pad", 3.0, 1)]) == 9.0\n'
    ),
    'stock.csv': (
        'pen, 1.50, 4\n'
        'pad, 3.00, 1\n'
        'ink, 12.00, 2\n'
    ),
    'README.md': (
        '# inventory\n'
        '\n'
        'Run `python inventory.py stock.csv` to print the order total.\n'
    ),
    'TODO.txt': (
        '- validate the input lines\n'
        '- add a discount to the order total\n'
    ),
}

# What the model changes.
AFTER: dict[str, str] = {
    'inventory.py': (
        '"""A tiny inventory: items with a price and a quantity, and an order total."""\n'
        '\n'
        'from dataclasses import dataclass\n'
        '\n'
        '\n'
        '@dataclass\n'
        'class Item:\n'
        '    name: str\n'
        '    price: float\n'
        '    quantity: int\n'
        '\n'
        '\n'
        'def parse_line(line):\n'
        '    parts = [p.strip() for p in line.split(",")]\n'
        '    if len(parts) != 3:\n'
        '        raise ValueError(f"expected \'name, price, quantity\', got {line!r}")\n'
        '    name, price, quantity = parts\n'
        '    if int(quantity) < 0:\n'
        '        raise ValueError(f"negative quantity for {name}")\n'
        '    return Item(name, float(price), int(quantity))\n'
        '\n'
        '\n'
        'def load(path):\n'
        '    with open(path) as f:\n'
        '        return [parse_line(line) for line in f if line.strip()]\n'
        '\n'
        '\n'
        'def total(items, discount=0.0):\n'
        '    """Sum of price x quantity, less a discount given as a fraction (0.1 = 10 %)."""\n'
        '    if not 0.0 <= discount < 1.0:\n'
        '        raise ValueError("discount must be in [0, 1)")\n'
        '    subtotal = sum(item.price * item.quantity for item in items)\n'
        '    return round(subtotal * (1.0 - discount), 2)\n'
        '\n'
        '\n'
        'if __name__ == "__main__":\n'
        '    import sys\n'
        '\n'
        '    discount = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0\n'
        '    print(f"total: {total(load(sys.argv[1]), discount):.2f}")\n'
    ),
    'test_inventory.py': (
        'import pytest\n'
        '\n'
        'from inventory import Item, parse_line, total\n'
        '\n'
        '\n'
        'def test_parse_line():\n'
        '    assert parse_line("pen, 1.50, 4") == Item("pen", 1.5, 4)\n'
        '\n'
        '\n'
        'def test_total():\n'
        '    assert total([Item("pen", 1.5, 4), Item("pad", 3.0, 1)]) == 9.0\n'
        '\n'
        '\n'
        'def test_total_with_discount():\n'
        '    assert total([Item("pen", 1.5, 4), Item("pad", 3.0, 1)], discount=0.1) == 8.1\n'
        '\n'
        '\n'
        'def test_bad_discount():\n'
        '    with pytest.raises(ValueError):\n'
        '        total([], discount=1.5)\n'
    ),
    'README.md': (
        '# inventory\n'
        '\n'
        'Run `python inventory.py sample_stock.csv` to print the order total, and\n'
        '`python inventory.py sample_stock.csv 0.1` for a 10 % discount.\n'
    ),
}

# Files the model makes, removes and moves (the rename happens after AFTER's edits).
CREATED: dict[str, str] = {
    'CHANGELOG.md': (
        '# Changes\n'
        '\n'
        '- input lines are validated: a wrong field count or a negative quantity is an error\n'
        '- `total()` takes an optional discount (a fraction: 0.1 is 10 %)\n'
        '- the sample data is `sample_stock.csv`\n'
    ),
}
DELETED = ('TODO.txt',)  # both items are done
RENAMED = {'stock.csv': 'sample_stock.csv'}


def final_files() -> dict[str, str]:
    """The project after the turn is applied: path -> text."""
    out = {rel: AFTER.get(rel, text) for rel, text in FILES.items() if rel not in DELETED}
    for src, dst in RENAMED.items():
        out[dst] = out.pop(src)
    return {**out, **CREATED}


def reply_text() -> str:
    """The simulated model's reply: a sentence and a unified diff in a fence that modifies
    three files (several hunks), creates one, deletes one and renames one."""
    parts: list[str] = []
    for path, new in AFTER.items():
        parts.extend(difflib.unified_diff(FILES[path].splitlines(keepends=True),
                                          new.splitlines(keepends=True), f"a/{path}", f"b/{path}"))
    for path, text in CREATED.items():
        lines = text.splitlines(keepends=True)
        parts += ["--- /dev/null\n", f"+++ b/{path}\n", f"@@ -0,0 +1,{len(lines)} @@\n",
                  *("+" + line for line in lines)]
    for path in DELETED:
        lines = FILES[path].splitlines(keepends=True)
        parts += [f"--- a/{path}\n", "+++ /dev/null\n", f"@@ -1,{len(lines)} +0,0 @@\n",
                  *("-" + line for line in lines)]
    for src, dst in RENAMED.items():
        parts += [f"diff --git a/{src} b/{dst}\n", "similarity index 100%\n",
                  f"rename from {src}\n", f"rename to {dst}\n"]
    return ("Validated the input lines, added an optional discount, noted it in a changelog, "
            "removed the finished TODO list and renamed the sample data:\n\n```diff\n"
            + "".join(parts) + "```\n")


# What the demo's model answers to any other instruction (before: filler words, read as a reply
# with no diff and nothing to say why)
OTHER_REPLY = (
    "This is spark-pair's offline demo: its simulated model knows one scripted turn, the one it "
    "made at the start (an instruction that mentions a discount gets it again), and writes no "
    "diff for any other. Try /undo and /redo on that "
    "turn, f1 for every key; to edit with a real model, quit (ctrl+q) and run spark-pair in "
    "your repository with a base URL, key and model set (README: Set-up).\n")


def script() -> dict[str, object]:
    """The simulator script whose reply edits the demo project; any other instruction gets
    OTHER_REPLY."""
    return {"replies": [{"match": MATCH, "text": reply_text()}], "default": OTHER_REPLY}
