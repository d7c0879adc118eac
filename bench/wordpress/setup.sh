#!/bin/sh
# WordPress site for the crawl benchmark of issue #28.
#
# What it is: a stock WordPress (Debian 12's `wordpress` package, 6.1.x, default theme Twenty
# Twenty-Three) with 300 posts, 5 pages, 10 categories and 30 tags, served by Apache 2.4 + mod_php
# 8.2 on http://127.0.0.1:8080/ only, with MariaDB listening on its Unix socket only. The benchmark
# crawls it with render=auto, with render=never, and with a bare Scrapy spider, and compares them.
#
# How to run (Debian 12, as root):
#     sh bench/wordpress/setup.sh                          # install, configure, fill, check
#     WP_BENCH_NOW=1795789162 sh bench/wordpress/setup.sh  # same post dates as the first run
#     sh bench/wordpress/wordpress.sh start|stop|restart|status
# Post dates are spread over the 3 years before the moment populate.php runs, so the
# /year/month/ part of post URLs depends on that day unless WP_BENCH_NOW (Unix time) pins it;
# everything else in the content is fixed by populate.php's seed.
#
# It is idempotent: files already right are left alone, services restart only when their
# configuration changed, and populate.php is skipped when the site already has its 300 posts.
# To rebuild the content: mysql -e 'DROP DATABASE wordpress' and run this again.
# It replaces /etc/apache2/ports.conf (Apache then listens on 127.0.0.1:8080 only; the original
# is kept as ports.conf.orig) and disables Apache's 000-default site.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
HOST=127.0.0.1
PORT=8080
URL="http://$HOST:$PORT"
WPCONF=/etc/wordpress/config-$HOST.php
DB=wordpress
DBUSER=wordpress
PERMALINK='/%year%/%monthnum%/%postname%/'
# php8.2-cli comes with libapache2-mod-php; php-xml is needed by /wp-sitemap.xml; curl by the checks.
PKGS="wordpress mariadb-server apache2 libapache2-mod-php php-mysql php-xml curl"
APACHE_PID=/var/run/apache2/apache2.pid
MARIADB_PID=/run/mysqld/mysqld.pid

say() { echo "setup: $*"; }
die() { echo "setup: error: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root"

# put FILE MODE OWNER: write stdin to FILE unless it already has exactly that content.
# Sets CHANGED=1 when it wrote.
put() {
    _tmp=$(mktemp)
    cat >"$_tmp"
    if [ -f "$1" ] && cmp -s "$_tmp" "$1"; then
        rm -f "$_tmp"
        say "unchanged $1"
    else
        mkdir -p "$(dirname "$1")"
        chmod "$2" "$_tmp"
        chown "$3" "$_tmp"
        mv -f "$_tmp" "$1"
        CHANGED=1
        say "wrote $1"
    fi
    chmod "$2" "$1"
    chown "$3" "$1"
}
# keep_orig FILE SUFFIX MARKER: copy FILE to FILE.SUFFIX once, if it is not yet ours (no MARKER).
keep_orig() {
    if [ -f "$1" ] && [ ! -e "$1.$2" ] && ! grep -q "$3" "$1"; then
        cp -p "$1" "$1.$2"
        say "kept the original as $1.$2"
    fi
}
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
sql() { mysql -N -B "$@"; }
http_code() { curl -s -o /dev/null -w '%{http_code}' "$URL$1" || true; }

# ---------------------------------------------------------------- packages
missing=
for p in $PKGS; do
    case "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)" in
        ii*) ;;
        *) missing="$missing $p" ;;
    esac
done
if [ -n "$missing" ]; then
    say "installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    # shellcheck disable=SC2086
    apt-get install -y -q $PKGS
else
    say "packages already installed"
fi
wpver=$(dpkg-query -W -f='${Version}' wordpress)
case "$wpver" in 6.1.*) ;; *) say "warning: wordpress $wpver, the benchmark was set up with 6.1.9" ;; esac

# ---------------------------------------------------------------- MariaDB: socket only
CHANGED=0
put /etc/mysql/mariadb.conf.d/90-wordpress-bench.cnf 0644 root:root <<'EOF'
# WordPress crawl benchmark: socket only, no TCP listener
[mysqld]
skip-networking
EOF
if alive "$MARIADB_PID"; then
    if [ "$CHANGED" = 1 ]; then /etc/init.d/mariadb restart; fi
else
    /etc/init.d/mariadb start
fi
i=0
until mysqladmin ping >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -gt 150 ] && die "mariadb does not answer"; sleep 0.2
done

# ---------------------------------------------------------------- WordPress config (Debian layout)
# Secrets: kept from an existing file, otherwise generated on this machine (the public pages
# carry no nonce, so they do not change what a crawler sees).
secret() { head -c 48 /dev/urandom | base64 | tr -d '+/=\n'; }
conf_get() {
    [ -f "$WPCONF" ] || return 0
    php -r 'include $argv[1]; if (defined($argv[2])) echo constant($argv[2]);' "$WPCONF" "$1" 2>/dev/null || true
}
for k in DB_PASSWORD AUTH_KEY SECURE_AUTH_KEY LOGGED_IN_KEY NONCE_KEY AUTH_SALT SECURE_AUTH_SALT LOGGED_IN_SALT NONCE_SALT; do
    v=$(conf_get "$k")
    case "$v" in
        *[!A-Za-z0-9]*) die "$WPCONF: $k has characters this script does not write; move the file away" ;;
        "") if [ "$k" = DB_PASSWORD ]; then v=$(secret | cut -c1-23); else v=$(secret); fi ;;
    esac
    eval "$k=\$v"
done
CHANGED=0
put "$WPCONF" 0640 root:www-data <<EOF
<?php
/* WordPress crawl benchmark site, http://$HOST:$PORT/ */
define( 'DB_NAME', '$DB' );
define( 'DB_USER', '$DBUSER' );
define( 'DB_PASSWORD', '$DB_PASSWORD' );
define( 'DB_HOST', 'localhost' );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );
define( 'AUTH_KEY',         '$AUTH_KEY' );
define( 'SECURE_AUTH_KEY',  '$SECURE_AUTH_KEY' );
define( 'LOGGED_IN_KEY',    '$LOGGED_IN_KEY' );
define( 'NONCE_KEY',        '$NONCE_KEY' );
define( 'AUTH_SALT',        '$AUTH_SALT' );
define( 'SECURE_AUTH_SALT', '$SECURE_AUTH_SALT' );
define( 'LOGGED_IN_SALT',   '$LOGGED_IN_SALT' );
define( 'NONCE_SALT',       '$NONCE_SALT' );
\$table_prefix = 'wp_';
define( 'WP_DEBUG', false );
define( 'WP_HOME', 'http://$HOST:$PORT' );
define( 'WP_SITEURL', 'http://$HOST:$PORT' );
define( 'WP_CONTENT_DIR', '/var/lib/wordpress/wp-content' );
define( 'AUTOMATIC_UPDATER_DISABLED', true );
define( 'DISABLE_WP_CRON', true );
EOF

# ---------------------------------------------------------------- database and user
if [ "$(sql -e "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name='$DB'")" = 0 ]; then
    sql -e "CREATE DATABASE \`$DB\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
    say "created database $DB"
fi
# The password goes through stdin, not the command line.
if printf '[client]\npassword=%s\n' "$DB_PASSWORD" | mysql --defaults-extra-file=/dev/stdin -u "$DBUSER" -e 'SELECT 1' "$DB" >/dev/null 2>&1; then
    say "database user $DBUSER already works"
else
    sql <<EOF
CREATE USER IF NOT EXISTS '$DBUSER'@'localhost' IDENTIFIED BY '$DB_PASSWORD';
ALTER USER '$DBUSER'@'localhost' IDENTIFIED BY '$DB_PASSWORD';
GRANT ALL PRIVILEGES ON \`$DB\`.* TO '$DBUSER'@'localhost';
FLUSH PRIVILEGES;
EOF
    say "created/updated database user $DBUSER"
fi

# ---------------------------------------------------------------- Apache on 127.0.0.1:8080
CHANGED=0
keep_orig /etc/apache2/ports.conf orig 'WordPress crawl benchmark'
put /etc/apache2/ports.conf 0644 root:root <<EOF
# WordPress crawl benchmark: loopback only (original in ports.conf.orig)
Listen $HOST:$PORT
EOF
put /etc/apache2/conf-available/servername.conf 0644 root:root <<EOF
ServerName $HOST
EOF
put /etc/apache2/sites-available/wordpress-bench.conf 0644 root:root <<EOF
<VirtualHost $HOST:$PORT>
    ServerName $HOST
    DocumentRoot /usr/share/wordpress
    DirectoryIndex index.php index.html
    ErrorLog \${APACHE_LOG_DIR}/wp-error.log
    CustomLog \${APACHE_LOG_DIR}/wp-access.log combined

    Alias /wp-content /var/lib/wordpress/wp-content

    <Directory /usr/share/wordpress>
        Options FollowSymLinks
        AllowOverride All
        Require all granted
    </Directory>
    <Directory /var/lib/wordpress/wp-content>
        Options FollowSymLinks
        Require all granted
    </Directory>
</VirtualHost>
EOF
# Debian's htaccess (a conffile, symlinked as /usr/share/wordpress/.htaccess) with the
# single-blog rewrite block switched on.
keep_orig /etc/wordpress/htaccess dpkg-orig '^RewriteRule \^index'
put /etc/wordpress/htaccess 0644 root:root <<'EOF'
# For rewrite rules needed for making Wordpress URL friendly
# See Options -> Permalinks for details and please use the defaults,
# especially in mind when hosting several blogs on one machine!

##
## Configuration for a single blog hosted on / (root of the website)
##
<IfModule mod_rewrite.c>
RewriteEngine On
RewriteBase /
RewriteRule ^index\.php$ - [L]
RewriteCond %{REQUEST_FILENAME} !-f
RewriteCond %{REQUEST_FILENAME} !-d
RewriteRule . /index.php [L]
</IfModule>

##
## Configuration for a multi-site wordpress installation using subdomains
##
#<IfModule mod_rewrite.c>
#RewriteEngine On
#RewriteBase /
#RewriteRule ^index\.php$ - [L]
## uploaded files
#RewriteRule ^files/(.+) wp-includes/ms-files.php?file=$1 [L]
## real files dealt directly
#RewriteCond %{REQUEST_FILENAME} -f [OR]
#RewriteCond %{REQUEST_FILENAME} -d
#RewriteRule ^ - [L]
## other go through index.php
#RewriteRule . index.php [L]
#</IfModule>

EOF
[ -e /etc/apache2/mods-enabled/rewrite.load ] || { a2enmod -q rewrite; CHANGED=1; }
[ -e /etc/apache2/conf-enabled/servername.conf ] || { a2enconf -q servername; CHANGED=1; }
# javascript-common's /javascript alias was not enabled on the original machine
[ ! -e /etc/apache2/conf-enabled/javascript-common.conf ] || { a2disconf -q javascript-common; CHANGED=1; }
[ ! -e /etc/apache2/sites-enabled/000-default.conf ] || { a2dissite -q 000-default; CHANGED=1; }
[ -e /etc/apache2/sites-enabled/wordpress-bench.conf ] || { a2ensite -q wordpress-bench; CHANGED=1; }
apache2ctl configtest >/dev/null 2>&1 || { apache2ctl configtest; die "apache configuration test failed"; }
if alive "$APACHE_PID"; then
    if [ "$CHANGED" = 1 ]; then apache2ctl restart; say "apache2 restarted"; fi
else
    apache2ctl start
    say "apache2 started"
fi

# ---------------------------------------------------------------- install + content
# populate.php does the non-interactive install (wp_install, site options, permalink structure,
# removal of the sample content) and then writes the content, in the order that fixes the IDs.
# Auto-updates and WP-Cron are off through the constants in $WPCONF.
installed=$(sql -e "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='$DB' AND table_name='wp_options'")
if [ "$installed" = 1 ]; then
    installed=$(sql -e "SELECT COUNT(*) FROM \`$DB\`.wp_options WHERE option_name='siteurl'")
fi
count_posts() { sql -e "SELECT COUNT(*) FROM \`$DB\`.wp_posts WHERE post_type='$1' AND post_status='publish'"; }
if [ "$installed" = 0 ]; then
    ntables=$(sql -e "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='$DB'")
    [ "$ntables" = 0 ] || die "database $DB has tables but no installed site; drop it (mysql -e 'DROP DATABASE $DB') and rerun"
    say "installing WordPress and generating content (populate.php)"
    php "$HERE/populate.php"
else
    n=$(count_posts post)
    if [ "$n" = 300 ]; then
        say "site installed with 300 posts: populate skipped"
    else
        die "site installed with $n posts instead of 300; drop the database (mysql -e 'DROP DATABASE $DB') and rerun"
    fi
fi

# Permalinks: populate.php set them; set and flush again only if they are not in place.
perm=$(sql -e "SELECT option_value FROM \`$DB\`.wp_options WHERE option_name='permalink_structure'")
rules=$(sql -e "SELECT LENGTH(option_value) FROM \`$DB\`.wp_options WHERE option_name='rewrite_rules'")
if [ "$perm" = "$PERMALINK" ] && [ "${rules:-0}" -gt 100 ]; then
    say "permalinks already $PERMALINK"
else
    WP_BENCH_DIR=$HERE WP_BENCH_PERMALINK=$PERMALINK php <<'EOF'
<?php
require getenv('WP_BENCH_DIR') . '/boot.php';
bench_permalinks(getenv('WP_BENCH_PERMALINK'));
echo "setup: permalinks set to ", get_option('permalink_structure'), " and rewrite rules flushed\n";
EOF
fi

# ---------------------------------------------------------------- checks
i=0
until [ "$(http_code /)" = 200 ]; do
    i=$((i + 1)); [ $i -gt 100 ] && die "$URL/ does not answer 200"; sleep 0.2
done
posts=$(count_posts post); pages=$(count_posts page)
cats=$(sql -e "SELECT COUNT(*) FROM \`$DB\`.wp_term_taxonomy WHERE taxonomy='category'")
tags=$(sql -e "SELECT COUNT(*) FROM \`$DB\`.wp_term_taxonomy WHERE taxonomy='post_tag'")
say "content: $posts posts, $pages pages, $cats categories, $tags tags"
[ "$posts/$pages/$cats/$tags" = 300/5/10/30 ] || die "expected 300 posts, 5 pages, 10 categories, 30 tags"
post=$(sql -e "SELECT CONCAT('/', DATE_FORMAT(post_date, '%Y/%m'), '/', post_name, '/') FROM \`$DB\`.wp_posts WHERE post_type='post' AND post_status='publish' ORDER BY ID LIMIT 1")
cat=$(sql -e "SELECT t.slug FROM \`$DB\`.wp_terms t JOIN \`$DB\`.wp_term_taxonomy x USING (term_id) WHERE x.taxonomy='category' AND x.count > 0 ORDER BY t.term_id LIMIT 1")
tag=$(sql -e "SELECT t.slug FROM \`$DB\`.wp_terms t JOIN \`$DB\`.wp_term_taxonomy x USING (term_id) WHERE x.taxonomy='post_tag' AND x.count > 0 ORDER BY t.term_id LIMIT 1")
fail=0
for path in / "$post" "/category/$cat/" "/tag/$tag/" /wp-sitemap.xml; do
    code=$(http_code "$path")
    say "GET $URL$path -> $code"
    [ "$code" = 200 ] || fail=1
done
[ "$fail" = 0 ] || die "some pages do not answer 200"
say "ok: $URL/ (wordpress $wpver, theme $(sql -e "SELECT option_value FROM \`$DB\`.wp_options WHERE option_name='stylesheet'"))"
