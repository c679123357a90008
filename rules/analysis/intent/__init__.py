"""CI-fix intent: does a PR say it fixes something failing, flaky or red in CI?

The trigger of `dedup-note` and `failing-run-link` (and of the App's evidence hooks).
It asks for evidence of a failure tied to CI, tests or jobs, not for keywords: a
`[CI]` tag or a `fix` verb alone does not make a capacity, trigger, logging, report,
schedule, auto-update, security-scanner or feature PR a CI fix, and a diff that only
un-skips tests or only touches repository automation has no failing run; a diff that
only skips tests answers one. A CI fix the description mentions "also", beside the work
the title names, is a side effect; tests that fail only when run on their own pass in
CI's suite; a run link alone, without a stated failure, is the PR's own validation run;
a limit imposed ("Limit `MAX_JOBS`", "Add timeout for the nightly release") is preventive
unless the text names what failed (a hang, a run that timed out, a stuck job).
A fixed failure of a scanner, schedule or bot job is a red job; in a log or a report the
failure is the content. A failure the new behaviour reacts to or handles ("24h when
failing", "retry failed jobs", "on failure", "Handle upload failures") is a condition, not
a failure fixed; "Fix A and B e2e test configurations" fixes both tests. Everything is
linear in the text and the diff (titles capped, bodies through `prtext.markdown.clean`).
"""

from rules.analysis.intent.body import ci_fix_phrase, described, squash_subjects, who_reads
from rules.analysis.intent.reading import Reading, follows_up_own_change, read_ci_fix
from rules.analysis.intent.title import Title, Verdict, judge_title

__all__ = ["Reading", "Title", "Verdict", "ci_fix_phrase", "described", "follows_up_own_change",
           "judge_title", "read_ci_fix", "squash_subjects", "who_reads"]
