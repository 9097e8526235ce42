#!/usr/bin/env python3
"""Keeps the "settings" part of schemas/rulepack.schema.json generated from the settings
table (stdlib only).

usage: gen-rule-schema.py SETTINGS_SCHEMA_TOOL [--check]

SETTINGS_SCHEMA_TOOL is the build's settings_schema program (build/tools/settings_schema),
which prints the schema of `settings:` from engine/include/triage/settings.h. Without
--check, writes it into $defs.settings of the pack schema; with --check, exits 1 when the
file differs (run without --check, or tools/gen-rule-schema.sh, to regenerate).
"""
import json
import os
import subprocess
import sys

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schemas",
                      "rulepack.schema.json")


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] != "--check"):
        print(__doc__)
        return 2
    generated = json.loads(subprocess.run([sys.argv[1]], check=True, stdout=subprocess.PIPE).stdout)
    with open(SCHEMA, encoding="utf-8") as fh:
        text = fh.read()
    doc = json.loads(text)
    doc["properties"]["settings"] = {"$ref": "#/$defs/settings"}
    doc["$defs"]["settings"] = generated
    new = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if len(sys.argv) == 3:
        if new != text:
            print("schemas/rulepack.schema.json: the settings part is not the one the settings "
                  "table generates; run tools/gen-rule-schema.sh")
            return 1
        print("schemas/rulepack.schema.json: settings part matches the settings table")
        return 0
    with open(SCHEMA, "w", encoding="utf-8") as fh:
        fh.write(new)
    print("wrote schemas/rulepack.schema.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
