"""The scratch project `spark-pair demo` creates, and the edit the simulated model makes."""

from __future__ import annotations

import difflib

PROMPT = "validate input lines and add an optional discount to the order total"
MATCH = "discount"
CONTEXT_FILES = ("inventory.py", "test_inventory.py")

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
}


def reply_text() -> str:
    """The simulated model's reply: a sentence and a multi-hunk unified diff in a fence."""
    parts = []
    for path, new in AFTER.items():
        parts.extend(difflib.unified_diff(FILES[path].splitlines(keepends=True),
                                          new.splitlines(keepends=True), f"a/{path}", f"b/{path}"))
    return ("Validated the input lines and added an optional discount:\n\n```diff\n"
            + "".join(parts) + "```\n")


def script() -> dict[str, object]:
    """The simulator script whose reply edits the demo project."""
    return {"replies": [{"match": MATCH, "text": reply_text()}]}
