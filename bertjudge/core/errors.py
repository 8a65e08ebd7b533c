"""The base of bertjudge's own errors: an error a user can act on, whose message says what and where
(file and line, key or part). The command line prints it as one line, without the Python traceback."""


class BertJudgeError(Exception):
    """Base of every error bertjudge raises on purpose (bad records, formats, judge folders, zoo entries,
    failed rows, calibration data, soups, backends)."""
