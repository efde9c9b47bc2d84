"""Files breaking the one reading rule (:mod:`microrelease.core.data.reading`): read by every engine
and by the dashboard's upload, each refused with the same words."""

HEADER = b"age,gender,zipcode,job,hours,city\n"
ROW = b"34,male,81667,clerk,40,Munich\n"
GOOD = HEADER + ROW * 49  # lines 2..50


# name -> (file bytes, the message's words after the file's name)
MALFORMED = {
    "short-row": (GOOD + b"45,female,81675\n" + ROW, "line 51 has 3 field(s) where the header has 6"),
    "long-row": (GOOD + ROW.rstrip(b"\n") + b",extra\n", "line 51 has 7 field(s) where the header has 6"),
    "nul-in-value": (GOOD + b"34,M\x00,81667,clerk,40,Munich\n", "line 51 holds a NUL byte in column 'gender' (a NUL is not text)"),
    "nul-in-header": (b"age,gen\x00der,zipcode,job,hours,city\n" + ROW, "line 1 holds a NUL byte in field 2 of the header (a NUL is not text)"),
    "empty-name": (b"age,,zipcode,job,hours,city\n" + ROW, "line 1 (the header) has an empty name in column 2"),
    "duplicate-names": (b"age,gender,zipcode,job,age,city\n" + ROW, "line 1 (the header) has duplicate column names ['age']"),
    "invalid-utf8": (GOOD + b"34,male,81667,cl\xffrk,40,Munich\n", "line 51 has a byte that is not UTF-8 (0xff) in column 'job'; save the file as UTF-8"),
    "quoted-short-row": (HEADER + b'34,"ma,le",81667,clerk,40,Munich\n' + b"45,female\n", "line 3 has 2 field(s) where the header has 6"),
    "unclosed-quote": (GOOD + b'34,"male,81667,clerk,40,Munich\n' + ROW, "line 51 has a quoted value that is never closed"),
    "crlf-among-lf": (GOOD + ROW.replace(b"\n", b"\r\n") + ROW, r"line 51 ends with \r\n where the header ends with \n (save the file with one kind of line end)"),
    "blank-but-spaces": (GOOD + b"   \n" + ROW, "line 51 is blank but for spaces, where the header has 6 fields"),
}
