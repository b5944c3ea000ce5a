"""What bench/report.py and its section modules share: the markdown table and the words for a
figure whose bench did not run."""

NOT_MEASURED = "not measured in this run"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
