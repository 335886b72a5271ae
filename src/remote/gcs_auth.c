/*
 * gcs_auth.c - Cloud Storage access tokens; see gcs_auth.h.
 */
#include "gcs_auth.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GCS_SCOPE "https://www.googleapis.com/auth/devstorage.read_only"
#define GCS_TOKEN_MAX (1u << 20)

/* base64url without padding of n bytes; malloc'ed. */
static char *b64url(const unsigned char *d, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char *out = malloc(4 * ((n + 2) / 3) + 1), *w = out;
    size_t i;

    if (out == NULL)
        return NULL;
    for (i = 0; i + 2 < n; i += 3) {
        unsigned v = (unsigned)d[i] << 16 | (unsigned)d[i + 1] << 8 | d[i + 2];
        *w++ = tab[v >> 18 & 63];
        *w++ = tab[v >> 12 & 63];
        *w++ = tab[v >> 6 & 63];
        *w++ = tab[v & 63];
    }
    if (n - i == 1) {
        unsigned v = (unsigned)d[i] << 16;
        *w++ = tab[v >> 18 & 63];
        *w++ = tab[v >> 12 & 63];
    } else if (n - i == 2) {
        unsigned v = (unsigned)d[i] << 16 | (unsigned)d[i + 1] << 8;
        *w++ = tab[v >> 18 & 63];
        *w++ = tab[v >> 12 & 63];
        *w++ = tab[v >> 6 & 63];
    }
    *w = '\0';
    return out;
}

char *gcs_auth_jwt(const char *email, const char *pem, const char *aud, int64_t now,
                   struct xp_err *err)
{
    static const char header[] = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
    cJSON *claims = cJSON_CreateObject();
    char *cj = NULL, *h64 = NULL, *c64 = NULL, *s64 = NULL, *input = NULL, *jwt = NULL;
    unsigned char *sig = NULL;
    size_t siglen = 0;
    BIO *bio = NULL;
    EVP_PKEY *key = NULL;
    EVP_MD_CTX *md = NULL;

    if (claims == NULL || !cJSON_AddStringToObject(claims, "iss", email) ||
        !cJSON_AddStringToObject(claims, "scope", GCS_SCOPE) ||
        !cJSON_AddStringToObject(claims, "aud", aud) ||
        !cJSON_AddNumberToObject(claims, "iat", (double)now) ||
        !cJSON_AddNumberToObject(claims, "exp", (double)(now + 3600)) ||
        (cj = cJSON_PrintUnformatted(claims)) == NULL) {
        xp_err_set(err, -ENOMEM, "out of memory");
        goto done;
    }
    h64 = b64url((const unsigned char *)header, strlen(header));
    c64 = b64url((const unsigned char *)cj, strlen(cj));
    if (h64 == NULL || c64 == NULL || (input = malloc(strlen(h64) + strlen(c64) + 2)) == NULL) {
        xp_err_set(err, -ENOMEM, "out of memory");
        goto done;
    }
    sprintf(input, "%s.%s", h64, c64);
    bio = BIO_new_mem_buf(pem, -1);
    key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
    if (key == NULL || EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA) {
        xp_err_set(err, -EINVAL, "the service account's private_key is not an RSA key in PEM");
        goto done;
    }
    md = EVP_MD_CTX_new();
    if (md == NULL || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
        EVP_DigestSign(md, NULL, &siglen, (const unsigned char *)input, strlen(input)) != 1 ||
        (sig = malloc(siglen)) == NULL ||
        EVP_DigestSign(md, sig, &siglen, (const unsigned char *)input, strlen(input)) != 1 ||
        (s64 = b64url(sig, siglen)) == NULL) {
        xp_err_set(err, -EIO, "cannot sign the token request (RS256)");
        goto done;
    }
    jwt = malloc(strlen(input) + strlen(s64) + 2);
    if (jwt == NULL)
        xp_err_set(err, -ENOMEM, "out of memory");
    else
        sprintf(jwt, "%s.%s", input, s64);
done:
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(key);
    BIO_free(bio);
    cJSON_Delete(claims);
    cJSON_free(cj);
    free(h64);
    free(c64);
    free(s64);
    free(input);
    free(sig);
    return jwt;
}

static char *json_str(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) && v->valuestring[0] ? strdup(v->valuestring) : NULL;
}

int gcs_auth_init(struct gcs_auth *a, struct xp_err *err)
{
    const char *path = getenv("GOOGLE_APPLICATION_CREDENTIALS");
    const char *host = getenv("GCE_METADATA_HOST");
    char *text;
    size_t len;
    FILE *f;
    cJSON *j;

    memset(a, 0, sizeof(*a));
    pthread_mutex_init(&a->lock, NULL);
    a->metadata = strdup(host != NULL && host[0] ? host : "metadata.google.internal");
    if (a->metadata == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    if (path == NULL || path[0] == '\0')
        return 0;
    f = fopen(path, "r");
    if (f == NULL)
        return xp_err_set(err, -errno, "%s: %s", path, strerror(errno));
    text = malloc(GCS_TOKEN_MAX);
    len = text ? fread(text, 1, GCS_TOKEN_MAX, f) : 0;
    fclose(f);
    if (text == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    j = len < GCS_TOKEN_MAX ? cJSON_ParseWithLength(text, len) : NULL;
    memset(text, 0, len);
    free(text);
    if (j == NULL)
        return xp_err_set(err, -EINVAL, "%s: not JSON", path);
    {
        char *type = json_str(j, "type");
        int sa = type != NULL && strcmp(type, "service_account") == 0;
        free(type);
        if (!sa) {
            cJSON_Delete(j);
            return xp_err_set(err, -EINVAL, "%s: not a service account key (\"type\")", path);
        }
    }
    a->email = json_str(j, "client_email");
    a->private_key = json_str(j, "private_key");
    a->token_uri = json_str(j, "token_uri");
    if (a->token_uri == NULL)
        a->token_uri = strdup("https://oauth2.googleapis.com/token");
    cJSON_Delete(j);
    if (a->email == NULL || a->private_key == NULL || a->token_uri == NULL)
        return xp_err_set(err, -EINVAL, "%s: no client_email or private_key", path);
    return 0;
}

void gcs_auth_free(struct gcs_auth *a)
{
    free(a->email);
    if (a->private_key != NULL)
        memset(a->private_key, 0, strlen(a->private_key));
    free(a->private_key);
    free(a->token_uri);
    free(a->metadata);
    pthread_mutex_destroy(&a->lock);
    memset(a->token, 0, sizeof(a->token));
}

struct answer {
    char *s;
    size_t n;
};

static size_t answer_write(char *d, size_t size, size_t nmemb, void *arg)
{
    struct answer *b = arg;
    size_t n = size * nmemb;
    char *t;

    if (b->n + n + 1 > GCS_TOKEN_MAX || (t = realloc(b->s, b->n + n + 1)) == NULL)
        return 0;
    b->s = t;
    memcpy(b->s + b->n, d, n);
    b->n += n;
    b->s[b->n] = '\0';
    return n;
}

/* POST body (or GET when NULL) to url; the answer's JSON into *j. */
static int ask(const char *url, const char *body, const char *header, cJSON **j, struct xp_err *err)
{
    struct answer b = {0};
    struct curl_slist *h = header ? curl_slist_append(NULL, header) : NULL;
    CURL *c = curl_easy_init();
    CURLcode cc;
    long status = 0;
    int rc = 0, tries;

    *j = NULL;
    if (c == NULL || (header != NULL && h == NULL)) {
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    for (tries = 0; tries < 3; tries++) {
        b.n = 0;
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, answer_write);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
        if (body != NULL)
            curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        cc = curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        if (cc == CURLE_OK && status < 500)
            break;
    }
    if (cc != CURLE_OK)
        rc = xp_err_set(err, -EIO, "%s: %s", url, curl_easy_strerror(cc));
    else if (status != 200)
        rc = xp_err_set(err, -EACCES, "%s: HTTP %ld: %.200s", url, status, b.s ? b.s : "");
    else if ((*j = cJSON_ParseWithLength(b.s ? b.s : "", b.n)) == NULL)
        rc = xp_err_set(err, -EIO, "%s: the answer is not JSON", url);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    free(b.s);
    return rc;
}

int gcs_auth_token(void *arg, char *buf, size_t n, struct xp_err *err)
{
    struct gcs_auth *a = arg;
    int64_t now = (int64_t)time(NULL);
    cJSON *j = NULL;
    int rc = 0;

    pthread_mutex_lock(&a->lock);
    if (a->token[0] == '\0' || now >= a->expires_s - 60) {
        char url[1024];
        if (a->email != NULL) {
            char *jwt = gcs_auth_jwt(a->email, a->private_key, a->token_uri, now, err);
            char *body = jwt ? malloc(strlen(jwt) + 128) : NULL;
            if (body == NULL) {
                rc = jwt ? xp_err_set(err, -ENOMEM, "out of memory") : -EINVAL;
            } else {
                sprintf(body,
                        "grant_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3Agrant-type%%3Ajwt-bearer"
                        "&assertion=%s",
                        jwt);
                rc = ask(a->token_uri, body, NULL, &j, err);
            }
            free(jwt);
            free(body);
        } else {
            snprintf(url, sizeof(url),
                     "http://%s/computeMetadata/v1/instance/service-accounts/default/token",
                     a->metadata);
            rc = ask(url, NULL, "Metadata-Flavor: Google", &j, err);
        }
        if (rc == 0) {
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "access_token");
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "expires_in");
            if (!cJSON_IsString(t) || strlen(t->valuestring) >= sizeof(a->token) ||
                strpbrk(t->valuestring, "\r\n") != NULL) {
                rc = xp_err_set(err, -EIO, "the token answer has no access_token");
            } else {
                snprintf(a->token, sizeof(a->token), "%s", t->valuestring);
                a->expires_s = now + (cJSON_IsNumber(e) ? (int64_t)e->valuedouble : 300);
            }
        }
        cJSON_Delete(j);
    }
    if (rc == 0 && strlen(a->token) >= n)
        rc = xp_err_set(err, -ENAMETOOLONG, "access token too long");
    if (rc == 0)
        snprintf(buf, n, "%s", a->token);
    pthread_mutex_unlock(&a->lock);
    return rc;
}
