"""Tags."""


def slugify(text):
    """Lower-case text with runs of non-alphanumerics as single dashes."""
    out, dash = [], False
    for ch in text.lower():
        if ch.isalnum():
            out.append(ch)
            dash = False
        elif not dash and out:
            out.append("-")
            dash = True
    return "".join(out).strip("-")


def tag_url(tag):
    return "/tags/" + slugify(tag)
