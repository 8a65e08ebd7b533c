"""The base of bertjudge's own errors: an error a user can act on, whose message says what and where
(file and line, key or part). The command line prints it as one line, without the Python traceback."""


class BertJudgeError(Exception):
    """Base of every error bertjudge raises on purpose (bad records, formats, judge folders, zoo entries,
    failed rows, calibration data, soups, backends)."""


class JudgeUnavailable(BertJudgeError):
    """The judge itself cannot answer, whatever the rows: a judge server that is not reachable after retries or
    refuses the client. A run (``judge``, ``evaluate``) stops on it, keeping the rows done for a rerun, instead of
    writing each row as failed."""
