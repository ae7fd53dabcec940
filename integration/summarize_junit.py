"""Summarise JUnit XML reports as 'CLIENT: N passed, M failed, K skipped'.

Usage: summarize_junit.py CLIENT REPORT_DIR [SKIP_REASONS_FILE]
Lists each failing test with the first line of its message, and exits 1 when
anything failed (or when no test ran at all).
"""
import glob
import sys
import xml.etree.ElementTree as ET

client, report_dir = sys.argv[1], sys.argv[2]
reasons = {}
if len(sys.argv) > 3:
    for line in open(sys.argv[3]):
        if line.strip() and not line.startswith("#"):
            test, why = line.rstrip("\n").split("\t", 1)
            reasons[test] = why
passed = failed = skipped = 0
failures = []
for path in glob.glob(f"{report_dir}/**/*.xml", recursive=True):
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}.{case.get('name', '')}"
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is not None:
            failed += 1
            msg = (bad.get("message") or bad.text or "").strip().splitlines()
            failures.append(f"  FAILED {name}: {msg[0][:300] if msg else ''}")
        elif case.find("skipped") is not None:
            skipped += 1
            reason = case.find("skipped").get("message") or reasons.get(case.get("name", "").rstrip("()"), "(no reason given)")
            failures.append(f"  skipped {name}: {reason[:200]}")
        else:
            passed += 1
for line in failures:
    print(line)
print(f"{client}: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
