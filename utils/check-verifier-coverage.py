#!/usr/bin/env python3
"""Checks that invalid.mlir tests every numbered constraint of every dpc op
and attribute.

Reads the constraints from the generated dialect reference (each op's or
attribute's "- (Cn) ..." lines) and the tested (name, Cn) pairs from the
"// dpc.op (Cn)" and "// #dpc.attr (Cn)" lines that open the cases of
invalid.mlir. A constraint counts as tested
when the op itself has a case for it, or when an op with the same
specification text does (ops of one ODS class share their verifier).
Prints a summary and exits non-zero listing what is untested.
"""

import re
import sys
from collections import defaultdict


def read_constraints(doc_path):
    """Returns {op: {"C1": normalized text, ...}}."""
    constraints = defaultdict(dict)
    op = None
    current = None
    for line in open(doc_path, encoding="utf-8"):
        heading = re.match(r"^### `(dpc\.\w+)`", line)
        if heading:
            op, current = heading.group(1), None
            continue
        attr = re.match(r"^### (\w+)Attr$", line)
        if attr:
            snake = re.sub(r"(?<!^)(?=[A-Z])", "_", attr.group(1)).lower()
            op, current = "#dpc." + snake, None
            continue
        if line.startswith("## "):
            op, current = None, None
            continue
        item = re.match(r"^- \((C\d+)\) (.*)", line)
        if op and item:
            current = item.group(1)
            constraints[op][current] = item.group(2).strip()
        elif op and current and line.startswith("  ") and line.strip():
            constraints[op][current] += " " + line.strip()
        else:
            current = None
    return constraints


def read_tested(test_path):
    tested = set()
    for line in open(test_path, encoding="utf-8"):
        case = re.match(r"^// (#?dpc\.\w+) \((C\d+)\)$", line.strip())
        if case:
            tested.add((case.group(1), case.group(2)))
    return tested


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check-verifier-coverage.py DpcDialect.md invalid.mlir")
    constraints = read_constraints(sys.argv[1])
    tested = read_tested(sys.argv[2])
    tested_texts = {(c, constraints[op][c]) for op, c in tested
                    if c in constraints.get(op, {})}
    unknown = sorted(f"{op} ({c})" for op, c in tested
                     if c not in constraints.get(op, {}))
    untested = []
    total = 0
    for op in sorted(constraints):
        for c, text in sorted(constraints[op].items()):
            total += 1
            if (op, c) not in tested and (c, text) not in tested_texts:
                untested.append(f"{op} ({c}): {text}")
    print(f"{len(constraints)} ops, {total} constraints, "
          f"{total - len(untested)} tested, {len(untested)} untested")
    for entry in unknown:
        print(f"tested constraint does not exist: {entry}")
    for entry in untested:
        print(f"untested: {entry}")
    sys.exit(1 if untested or unknown else 0)


if __name__ == "__main__":
    main()
