#!/usr/bin/env python3
"""Where a test run's time went: the slowest tests of a Meson test log and,
given a folder of check's XML logs (CK_XML_LOG_FILE_NAME, one per test
program, as scripts/gpu-suite.sh --timing writes them), the slowest cases
of each test.

    scripts/test-times.py build/meson-logs/testlog.json [XML_DIR] [--top N]
"""
import argparse
import glob
import json
import os
import xml.etree.ElementTree as ET

CHECK_NS = {"c": "http://check.sourceforge.net/ns"}


def slowest_tests(log, top):
    tests = []
    with open(log) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                tests.append((r["duration"], r["name"], r["result"]))
    tests.sort(reverse=True)
    print(f"slowest {min(top, len(tests))} of {len(tests)} tests:")
    for duration, name, result in tests[:top]:
        print(f"  {duration:7.1f} s  {name}  {result}")


def slowest_cases(folder, top):
    for path in sorted(glob.glob(os.path.join(folder, "*.xml"))):
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError:
            print(f"{os.path.basename(path)}: incomplete (the test was stopped)")
            continue
        for suite in root.findall("c:suite", CHECK_NS):
            cases = [(float(t.findtext("c:duration", "0", CHECK_NS)),
                      t.findtext("c:id", "", CHECK_NS), t.get("result"))
                     for t in suite.findall("c:test", CHECK_NS)]
            cases.sort(reverse=True)
            title = suite.findtext("c:title", "", CHECK_NS)
            print(f"{title}: {sum(c[0] for c in cases):.1f} s over {len(cases)} cases")
            for duration, name, result in cases[:top]:
                print(f"  {duration:7.2f} s  {name}  {result}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("xml_dir", nargs="?")
    parser.add_argument("--top", type=int, default=5)
    a = parser.parse_args()
    if a.top < 1:
        parser.error("--top must be 1 or more")
    if not os.path.isfile(a.log):
        parser.error(f"no such log: {a.log}")
    if a.xml_dir and not os.path.isdir(a.xml_dir):
        parser.error(f"no such folder: {a.xml_dir}")
    if a.xml_dir:
        slowest_cases(a.xml_dir, a.top)
    slowest_tests(a.log, a.top)


if __name__ == "__main__":
    main()
