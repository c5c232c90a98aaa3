#!/usr/bin/env python3
"""Checks the folder tree's layering: within each folder given, no two subfolders name each other's types.

A part is a direct subfolder (files directly in the folder form the part "."). Part A uses part B when a
file of A names (outside comments and strings) a type declared at the top level of a file of B. Two parts
that use each other are a two-way dependency: one of them is not a lower layer. Names a file declares
itself (nested types such as LinkTable.Record) are not counted as uses of another part.

usage: scripts/layers.py [-v] FOLDER...   (exit 1 when any folder has a two-way dependency)
"""
import collections
import os
import re
import sys

TOP_LEVEL_DECLARATION = re.compile(
    r'^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|internal|private|fileprivate|package|final|indirect|nonisolated)\s+)*'
    r'(?:struct|class|enum|actor|protocol|typealias)\s+([A-Za-z_]\w*)', re.M)
ANY_DECLARATION = re.compile(r'(?:struct|class|enum|actor|protocol|typealias)\s+([A-Za-z_]\w*)')


def code_only(source):
    """The source without comments and string literals, where type names are not uses."""
    source = re.sub(r'/\*.*?\*/', '', source, flags=re.S)
    source = re.sub(r'//[^\n]*', '', source)
    source = re.sub(r'"""(.*?)"""', '""', source, flags=re.S)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', source)


def two_way_dependencies(folder):
    def part(path):
        first = os.path.relpath(path, folder).split(os.sep)
        return first[0] if len(first) > 1 else '.'

    sources = {}
    for directory, _, names in os.walk(folder):
        for name in names:
            if name.endswith('.swift'):
                path = os.path.join(directory, name)
                with open(path, encoding='utf-8') as file:
                    sources[path] = code_only(file.read())
    owner = {}
    for path, source in sources.items():
        for match in TOP_LEVEL_DECLARATION.finditer(source):
            owner.setdefault(match.group(1), part(path))
    uses = collections.defaultdict(lambda: collections.defaultdict(set))
    for path, source in sources.items():
        names = set(re.findall(r'\b[A-Z]\w*\b', source)) - set(ANY_DECLARATION.findall(source))
        for name in names:
            other = owner.get(name)
            if other is not None and other != part(path):
                uses[part(path)][other].add(name)
    return uses, [(a, b) for a in sorted(uses) for b in sorted(uses[a]) if a < b and a in uses.get(b, {})]


def main(arguments):
    verbose = '-v' in arguments
    folders = [argument for argument in arguments if argument != '-v']
    if not folders:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    failed = False
    for folder in folders:
        uses, cycles = two_way_dependencies(folder)
        for a, b in cycles:
            failed = True
            print(f'{folder}: {a} and {b} depend on each other: {a} names {", ".join(sorted(uses[a][b]))}; '
                  f'{b} names {", ".join(sorted(uses[b][a]))}', file=sys.stderr)
        if verbose:
            for a in sorted(uses):
                print(f'{folder}: {a} -> ' + '; '.join(f'{b} ({", ".join(sorted(n))})' for b, n in sorted(uses[a].items())))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
