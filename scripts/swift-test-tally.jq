# The tally of one `swift test` pass from Swift Testing's event stream (`--event-stream-output-path`, version 0:
# one JSON record a line), for scripts/swift-test-pass.sh: `jq -nR -f swift-test-tally.jq STREAM`.
# The console's result lines interleave with what the tests and their servers print, and lines were lost there
# (8 of 844 passes once); the stream has a record for every test and event, so this count is exact.
#
# A test is a `function` record (a parameterized one counts once, as in Swift Testing's summary). Its verdict:
# failed if an issue that is not known was recorded in it; skipped if it was skipped or cancelled; not ended if it
# has no end (the time limit, a crash); passed only with a known issue if its issues were all known; else passed.
# Swift Testing's own summary (the run's end record: "Test run with N tests … passed|failed after … [with K issues
# (including J known issues)]") is read beside it; `agrees` says whether the two give the same count of tests,
# the same verdict and the same number of issues that fail. `running`: the tests that started and did not end
# (what a pass stopped at its time limit was doing), each with where it is declared and, parameterized, the
# arguments of its cases that started and did not end. Out: one JSON object.

def failing: .issue.isKnown != true and .issue.isFailure != false and .issue.severity != "warning";

[inputs | fromjson? | select(type == "object")] as $records
| [$records[] | select(.kind == "test" and .payload.kind == "function") | .payload] as $tests
| [$records[] | select(.kind == "event") | .payload] as $events
| ($tests | map({key: .id, value: (.displayName // .name)}) | from_entries) as $names
| (reduce ($events[] | select(.testID != null)) as $e ({};
    .[$e.testID] |= ((. // {}) |
      if $e.kind == "testStarted" then .started = true
      elif $e.kind == "testEnded" then .ended = true
      elif $e.kind == "testCaseStarted" or $e.kind == "testCaseEnded" then
        ($e._testCase.id // "?") as $case
        | .cases[$case] = ((.cases[$case] // {name: ($e._testCase.displayName // "?"), open: 0})
            | .open += (if $e.kind == "testCaseStarted" then 1 else -1 end))
      elif $e.kind == "testSkipped" or $e.kind == "testCancelled" then .skipped = true
      elif $e.kind == "issueRecorded" then (if ($e | failing) then .failing += 1 else .known += 1 end)
      else . end))) as $by
| [$tests[] | . as $t | ($by[$t.id] // {}) as $s | {
    name: ("\"" + $names[$t.id] + "\""),
    verdict: (if ($s.failing // 0) > 0 then "failed" elif $s.skipped then "skipped" elif ($s.ended | not) then "not ended"
              elif ($s.known // 0) > 0 then "known issue" else "passed" end)}] as $tally
| [$tests[] | . as $t | ($by[$t.id] // {}) as $s | select($s.started and ($s.ended | not)) | {
    name: ("\"" + $names[$t.id] + "\""),
    at: (($t.sourceLocation.fileID // "?") + ":" + ($t.sourceLocation.line // 0 | tostring)),
    cases: [$s.cases // {} | .[] | select(.open > 0) | .name],
    caseCount: ($t._testCases // [] | length)}] as $running
| [$events[] | select(.kind == "issueRecorded" and failing)] as $failingIssues
| [$failingIssues[] | select($names[.testID // ""] == null)] as $outside
| ([$events[] | select(.kind == "runEnded") | .messages[]?.text | select(test("^Test run with "))] | last) as $summary
| def names($v): [$tally[] | select(.verdict == $v) | .name];
  def count($re): ($summary | capture($re)? | .n | tonumber) // 0;
  {
    tests: ($tally | length),
    passed: (names("passed") | length),
    failed: (names("failed") | length),
    skipped: (names("skipped") | length),
    known: names("known issue"),
    failedNames: names("failed"),
    notEnded: names("not ended"),
    outsideIssues: ($outside | length),
    failingIssues: ($failingIssues | length),
    running: $running,
    summary: $summary,
    agrees: ($summary != null
      and count("with (?<n>[0-9]+) tests? in ") == ($tally | length)
      and (($summary | test(" passed after ")) == (($failingIssues | length) == 0 and (names("not ended") | length) == 0))
      and count(" with (?<n>[0-9]+) issues?") - count("including (?<n>[0-9]+) known issues?") == ($failingIssues | length))
  }
