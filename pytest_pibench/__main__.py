"""``python -m pytest_pibench validate PATH`` and ``python -m pytest_pibench schema``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_pibench")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("validate", help="validate scenario files (DESIGN §4); exit 1 on any problem")
    check.add_argument("paths", nargs="*", help="files or directories (default: the bundled scenarios)")
    commands.add_parser("schema", help="print the JSON Schema of scenario files")
    args = parser.parse_args(argv)
    if args.command == "schema":
        from ._loading import json_schema

        print(json.dumps(json_schema(), indent=2))
        return 0
    from ._paths import bundled_scenarios_dir
    from ._validator import validate

    failed = False
    for path in args.paths or [str(bundled_scenarios_dir())]:
        report = validate(path)
        print(report.format())
        failed = failed or not report.ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
