#!/usr/bin/env python3
"""Writes each module's integration-test run order, .ci/it-times/<module>, from a run's failsafe reports.

Failsafe runs a module's test classes in several test JVMs, each taking the next class from one
queue. With runOrder=balanced it puts the classes that took longest first, from the statistics
file <module>/.surefire-it-times (named by runOrderStatisticsFileChecksum in the root pom), so a
long class no longer starts last and keeps the module waiting on it alone. Failsafe writes that
file itself after each run, with each test method's time (not its class's setup), and a run of
one class leaves that class alone in it; so the file is not committed, and .ci/run copies these
files, a line per class with its whole time, into place on a clean clone before the tests run.

Usage: python3 scripts/it-run-order.py [REPO_DIR]
  REPO_DIR: a checkout whose integration tests all just ran (default: this one); its
  <module>/target/failsafe-reports/TEST-*.xml are read, and the files are written here.
A class a run did not report keeps its figure from the file already here.
"""
import glob
import os
import sys
import xml.etree.ElementTree as ET

here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
source = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else here

for module_dir in sorted(glob.glob(os.path.join(source, "*", "target", "failsafe-reports"))):
    module = os.path.basename(os.path.dirname(os.path.dirname(module_dir)))
    target = os.path.join(here, ".ci", "it-times", module)
    millis = {}
    if os.path.exists(target):
        for line in open(target, encoding="utf-8"):
            parts = line.strip().split(",")
            if len(parts) == 3:
                millis[parts[2]] = millis.get(parts[2], 0) + int(parts[1])
    for report in glob.glob(os.path.join(module_dir, "TEST-*.xml")):
        suite = ET.parse(report).getroot()
        if int(suite.get("skipped", "0")) >= int(suite.get("tests", "0")):
            continue  # skipped here (a tool this machine lacks): its time says nothing of a run that has it
        millis[suite.get("name")] = int(float(suite.get("time", "0").replace(",", "")) * 1000)
    # a class whose source is gone is no longer run
    sources = os.path.join(here, module, "src", "test", "java")
    millis = {name: ms for name, ms in millis.items() if os.path.exists(os.path.join(sources, *name.split(".")) + ".java")}
    if not millis:
        continue
    os.makedirs(os.path.dirname(target), exist_ok=True)
    # one line a class, longest first; distinct figures, since ties would be ordered by hash
    rows, previous = [], None
    for name, ms in sorted(millis.items(), key=lambda kv: (-kv[1], kv[0])):
        ms = max(1, ms if previous is None or ms < previous else previous - 1)
        rows.append(f"1,{ms},{name}")
        previous = ms
    with open(target, "w", encoding="utf-8") as out:
        out.write("\n".join(rows) + "\n")
    print(f".ci/it-times/{module}: {len(rows)} classes, longest {rows[0].split(',')[2]} ({rows[0].split(',')[1]} ms)")
