# Doxygen input filter for the public headers. The headers carry ordinary
# C comments written for people reading the files; this filter lets Doxygen
# read the same comments as documentation, without changing line numbers:
#  - the header's opening comment becomes its file documentation;
#  - a comment directly above declarations documents them, and when it sits
#    above several declarations (no blank line between them), they form a
#    member group that shares it (DISTRIBUTE_GROUP_DOC).
function flush(   i, ndecl, first, last) {
    ndecl = 0
    for (i = 1; i <= n; i++)
        if (kind[i] == "decl_end")
            ndecl++
    if (cstart > 0 && ndecl >= 2) {
        for (i = n; i >= 1; i--)
            if (kind[i] == "decl_end") {
                last = i
                break
            }
        buf[cstart] = "/**@{*/" buf[cstart]
        buf[last] = buf[last] " /**@}*/"
    }
    for (i = 1; i <= n; i++)
        print buf[i]
    n = 0
    cstart = 0
    depth = 0
}
BEGIN { n = 0; cstart = 0; incomment = 0; depth = 0 }
{
    line = $0
    if (NR == 1 && line ~ /^\/\*$/)
        line = "/** @file"
    else if (!incomment && line ~ /^ *\/\*([^*]|$)/)
        sub(/\/\*/, "/**", line)
    # A blank line, a preprocessor line or a new top-level comment after
    # declarations ends the current block.
    if (line ~ /^ *$/ || (line ~ /^#/ && !incomment)) {
        flush()
        print line
        next
    }
    if (!incomment && line ~ /^ *\/\*/ && n > 0 && kind[n] != "comment")
        flush()
    n++
    buf[n] = line
    kind[n] = "other"
    if (!incomment && line ~ /^ *\/\*/) {
        if (cstart == 0 && n == 1)
            cstart = n
        if (line !~ /\*\//)
            incomment = 1
        kind[n] = "comment"
        next
    }
    if (incomment) {
        kind[n] = "comment"
        if (line ~ /\*\//)
            incomment = 0
        next
    }
    # Count braces so that a struct's members are not taken for separate
    # declarations; a declaration ends with ';' at depth 0.
    tmp = line
    opens = gsub(/\{/, "{", tmp)
    closes = gsub(/\}/, "}", tmp)
    depth += opens - closes
    if (depth == 0 && line ~ /; *(\/\*.*\*\/)? *$/)
        kind[n] = "decl_end"
}
END { flush() }
