#include <curl/curl.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one
   typed wrapper for each kind of value pushtrail passes or reads, nothing more. */

static inline CURLcode pt_curl_setopt_long(CURL *handle, CURLoption option, long value)
{
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pt_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value)
{
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pt_curl_setopt_str(CURL *handle, CURLoption option, const char *value)
{
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pt_curl_setopt_ptr(CURL *handle, CURLoption option, void *value)
{
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pt_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value)
{
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pt_curl_setopt_write_cb(CURL *handle, CURLoption option, curl_write_callback value)
{
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pt_curl_getinfo_long(CURL *handle, CURLINFO info, long *value)
{
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode pt_curl_getinfo_str(CURL *handle, CURLINFO info, char **value)
{
    return curl_easy_getinfo(handle, info, value);
}
