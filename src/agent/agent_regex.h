/*
 * agent_regex.h - Python `re` patterns for the agent CLI's regex flags,
 * translated to POSIX extended regexes (glibc regcomp): \d \D \w \W \s \S
 * (also inside [...]), (?:...), (?i) and the other leading inline flags,
 * lazy quantifiers (search only asks whether a match exists, which
 * laziness does not change), \A and \Z. A pattern Python refuses gets
 * Python's re.error message ("missing ), unterminated subpattern at
 * position 0").
 */
#ifndef XPROFS_AGENT_REGEX_H
#define XPROFS_AGENT_REGEX_H

#include <regex.h>
#include <stddef.h>

struct agent_regex {
    regex_t re;
    int compiled;
};

/* Compile pattern: 0; 1 with Python's message in msg for a bad pattern;
 * -ENOMEM. */
int agent_regex_compile(struct agent_regex *r, const char *pattern, char *msg, size_t n);

/* re.search(pattern, s) is not None. */
int agent_regex_search(const struct agent_regex *r, const char *s);

void agent_regex_free(struct agent_regex *r);

#endif
