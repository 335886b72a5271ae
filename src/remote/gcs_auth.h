/*
 * gcs_auth.h - OAuth access tokens for Cloud Storage (gs:// LOGDIRs).
 *
 * From the service account JSON named by GOOGLE_APPLICATION_CREDENTIALS: a
 * JWT (RS256, signed with the account's private key through libcrypto)
 * exchanged at its token_uri for an access token (RFC 7523); else from the
 * metadata server of a GCE or TPU VM (GCE_METADATA_HOST, default
 * metadata.google.internal). A token is kept until a minute before it
 * expires. Read-only scope.
 */
#ifndef XPROFS_GCS_AUTH_H
#define XPROFS_GCS_AUTH_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct gcs_auth {
    char *email;       /* service account, or NULL: the metadata server */
    char *private_key; /* PEM */
    char *token_uri;   /* where the JWT is exchanged */
    char *metadata;    /* metadata server host[:port] */
    pthread_mutex_t lock;
    char token[4096];  /* the current access token */
    int64_t expires_s; /* when it expires (CLOCK_REALTIME seconds) */
};

/* Read the credentials (GOOGLE_APPLICATION_CREDENTIALS, else the metadata
 * server). 0, or a negative errno with err (a file that is not a service
 * account's JSON). */
int gcs_auth_init(struct gcs_auth *a, struct xp_err *err);
void gcs_auth_free(struct gcs_auth *a);

/* A valid access token into buf (n bytes). 0 or a negative errno with err.
 * arg is the gcs_auth (the s3 client's token callback). */
int gcs_auth_token(void *arg, char *buf, size_t n, struct xp_err *err);

/* The signed JWT assertion for email with key at time now (for tests):
 * malloc'ed, or NULL with err. */
char *gcs_auth_jwt(const char *email, const char *pem, const char *aud, int64_t now,
                   struct xp_err *err);

#endif
