# CHANGELOG.md (Keep a Changelog) -> debian/changelog entries, newest first.
# Input variables: package, distribution, maintainer, fallback_date (RFC 5322, for
# "Unreleased"), revision (the Debian revision appended to every version).
function flush_item() {
    if (item == "") return
    text = (section != "" ? section ": " : "") item
    line = "  *"
    n = split(text, words, " ")
    for (w = 1; w <= n; w++) {
        if (length(line) + 1 + length(words[w]) > 78 && line != "  *" && line != "   ") {
            body = body line "\n"
            line = "   "
        }
        line = line " " words[w]
    }
    body = body line "\n"
    item = ""
}
function flush_entry() {
    flush_item()
    if (version == "") return
    if (body == "") body = "  * Release " version ".\n"
    printf "%s (%s-%s) %s; urgency=medium\n\n%s\n -- %s  %s\n\n", package, version, revision, distribution, body, maintainer, date
    version = ""; body = ""; section = ""
}
/^## / {
    flush_entry()
    heading = substr($0, 4)
    version = heading; sub(/ .*/, "", version); gsub(/[][]/, "", version)
    day = heading; sub(/^[^ ]* *-? */, "", day)
    if (day ~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]$/) {
        cmd = "LC_ALL=C date -u -R -d '" day " 12:00:00'"
        cmd | getline date; close(cmd)
    } else {
        date = fallback_date
    }
    next
}
version == "" { next }
/^### / { flush_item(); section = substr($0, 5); next }
/^- / { flush_item(); item = substr($0, 3); next }
/^[ \t]*$/ { flush_item(); next }
/^  / { sub(/^ +/, ""); item = item " " $0; next }
{ if (item == "") item = $0; else item = item " " $0 }
END { flush_entry() }
