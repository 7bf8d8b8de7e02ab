# Source this file: it defines paydesk_post, which signs a JSON body with the
# gateway family's HMAC scheme and POSTs it with curl.
#   PAYDESK_BASE=http://127.0.0.1:8800 PAYDESK_WEBSITE_KEY=... PAYDESK_SECRET_KEY=...
#   paydesk_post /json/Transaction '{"Currency":"EUR",...}'
# The URI encoding below covers host:port/path (letters, digits, . - _ : /).
# openssl sees the secret in its arguments: fine for a sandbox secret.
paydesk_post() {
  local path=$1 body=$2
  local hostpath=${PAYDESK_BASE#*://}$path
  local uri ts nonce md5 sig
  uri=$(printf '%s' "$hostpath" | sed -e 's/%/%25/g' -e 's/:/%3a/g' -e 's#/#%2f#g' | tr 'A-Z' 'a-z')
  ts=$(date +%s)
  nonce=$(openssl rand -hex 16)
  md5=$(printf '%s' "$body" | openssl md5 -binary | base64)
  sig=$(printf '%s' "${PAYDESK_WEBSITE_KEY}POST${uri}${ts}${nonce}${md5}" |
    openssl dgst -sha256 -hmac "$PAYDESK_SECRET_KEY" -binary | base64)
  curl -sS -X POST "$PAYDESK_BASE$path" \
    -H 'Content-Type: application/json; charset=utf-8' \
    -H "Authorization: hmac $PAYDESK_WEBSITE_KEY:$sig:$nonce:$ts" \
    --data-binary "$body" "${@:3}"
}

# paydesk_verify_push PUSH_URL AUTHORIZATION BODY_FILE — checks a push the
# way a merchant's endpoint does: over the push URL without its scheme.
paydesk_verify_push() {
  local hostpath=${1#*://} auth=${2#hmac } file=$3
  local key sig nonce ts uri md5 want
  IFS=: read -r key sig nonce ts <<<"$auth"
  uri=$(printf '%s' "$hostpath" | sed -e 's/%/%25/g' -e 's/:/%3a/g' -e 's#/#%2f#g' | tr 'A-Z' 'a-z')
  md5=$(openssl md5 -binary <"$file" | base64)
  want=$(printf '%s' "${key}POST${uri}${ts}${nonce}${md5}" |
    openssl dgst -sha256 -hmac "$PAYDESK_SECRET_KEY" -binary | base64)
  if [ "$want" = "$sig" ]; then echo "push signature OK"; else echo "push signature MISMATCH"; return 1; fi
}
