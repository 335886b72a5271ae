/*
 * agent_remote.h - store URLs (s3://, gs://) in an agent command's words:
 * each becomes the path of its local copy (src/remote/mirror.h), with the
 * run the command will read copied first, so the engine reads local files.
 */
#ifndef XPROFS_AGENT_REMOTE_H
#define XPROFS_AGENT_REMOTE_H

struct mirror;

#define AGENT_REMOTE_MAX 4 /* URLs in one command line */

struct agent_remote {
    struct mirror *mirrors[AGENT_REMOTE_MAX]; /* opened, in word order */
    char *words[AGENT_REMOTE_MAX];            /* the rewritten words */
    int n;
};

/* Rewrite in place the words of argv[first..argc) that are a store URL or
 * --flag=URL. A store that fails leaves its word as it was (the command
 * then answers XProf's path error) and says why on stderr. */
void agent_localize_urls(int argc, char **argv, int first, struct agent_remote *r);

/* Close the copies and free the words. */
void agent_remote_close(struct agent_remote *r);

#endif
