<?php
/* Install WordPress for http://127.0.0.1:8080/ and fill it with the crawl benchmark's content:
 * 300 posts, 5 pages, 10 categories, 30 tags. Normally run by setup.sh next to this file;
 * by hand: php populate.php   (needs mariadb running and /etc/wordpress/config-127.0.0.1.php;
 * apache optional). It refuses to run on an installed site: drop the database to start over.
 *
 * Deterministic: titles, bodies, categories, tags, post and term IDs come from mt_srand(20240601)
 * and the fixed insertion order. Post dates are spread over the 3 years before "now", so the
 * /%year%/%monthnum%/ part of post URLs depends on the day it runs, unless WP_BENCH_NOW (a Unix
 * time) is set: WP_BENCH_NOW=1795789162 (2026-11-27 14:19:22 UTC) gives the dates of the site the
 * benchmark was first run on. Not reproduced: the admin password (random, nobody logs in), page
 * dates and install timestamps (time of the run; the theme does not show them). */
require __DIR__ . '/boot.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-admin/includes/user.php';

if (is_blog_installed()) { fwrite(STDERR, "already installed; drop and recreate the database to rerun\n"); exit(1); }

$res = wp_install('Crawl Bench Blog', 'admin', 'admin@example.invalid', 1, '', 'bench-admin-' . bin2hex(random_bytes(6)));
echo "installed, user_id={$res['user_id']}\n";

update_option('blog_public', 1);
update_option('blogdescription', 'A WordPress site for crawl benchmarks');
update_option('default_comment_status', 'closed');
update_option('default_ping_status', 'closed');
update_option('default_pingback_flag', 0);
$GLOBALS['wp_rewrite']->set_permalink_structure('/%year%/%monthnum%/%postname%/');

// Remove the stock sample content (Hello world! + its comment, Sample Page, draft Privacy Policy).
foreach (get_posts(['post_type' => ['post', 'page'], 'post_status' => 'any', 'numberposts' => -1]) as $p) {
    wp_delete_post($p->ID, true);
}

mt_srand(20240601);
$words = explode(' ', 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum river mountain garden harbor lantern meadow orchard compass journey signal window engine archive bridge canyon forest glacier island valley market village library kitchen workshop theory method pattern network crawler server request response cache index query schedule budget report season weather morning evening history future practice system');
function rw($w) { return $w[mt_rand(0, count($w) - 1)]; }
function sentence($w) { $n = mt_rand(8, 16); $s = []; for ($i = 0; $i < $n; $i++) $s[] = rw($w); return ucfirst(implode(' ', $s)) . '.'; }
function paragraphs($w, $min, $max) {
    $out = [];
    $np = mt_rand($min, $max);
    for ($p = 0; $p < $np; $p++) {
        $ss = []; $ns = mt_rand(3, 6);
        for ($i = 0; $i < $ns; $i++) $ss[] = sentence($w);
        $out[] = "<!-- wp:paragraph -->\n<p>" . implode(' ', $ss) . "</p>\n<!-- /wp:paragraph -->";
    }
    return implode("\n\n", $out);
}

// 10 categories (the stock "Uncategorized" term is renamed to become the first one).
$catnames = ['Travel', 'Technology', 'Cooking', 'Science', 'History', 'Music', 'Gardening', 'Finance', 'Sports', 'Photography'];
$cats = [];
wp_update_term(1, 'category', ['name' => $catnames[0], 'slug' => sanitize_title($catnames[0])]);
$cats[] = 1;
foreach (array_slice($catnames, 1) as $c) { $t = wp_insert_term($c, 'category'); $cats[] = $t['term_id']; }

$tagnames = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet',
             'kilo', 'lima', 'mike', 'november', 'oscar', 'papa', 'quebec', 'romeo', 'sierra', 'tango',
             'uniform', 'victor', 'whiskey', 'xray', 'yankee', 'zulu', 'amber', 'cobalt', 'scarlet', 'violet'];
foreach ($tagnames as $t) wp_insert_term($t, 'post_tag');

wp_defer_term_counting(true);
$now = getenv('WP_BENCH_NOW');
if ($now === false || $now === '') $now = time();
elseif (ctype_digit($now)) $now = (int) $now;
else { fwrite(STDERR, "WP_BENCH_NOW must be a Unix time in seconds\n"); exit(1); }
$span = 3 * 365 * 86400;
for ($i = 1; $i <= 300; $i++) {
    $ts = $now - mt_rand(86400, $span);
    $title = ucfirst(rw($words)) . ' ' . rw($words) . ' ' . rw($words) . (mt_rand(0, 1) ? ' ' . rw($words) : '') . " $i";
    $pc = [$cats[mt_rand(0, 9)]];
    if (mt_rand(0, 4) == 0) $pc[] = $cats[mt_rand(0, 9)];
    $tags = [];
    $nt = mt_rand(1, 4);
    for ($k = 0; $k < $nt; $k++) $tags[] = $tagnames[mt_rand(0, 29)];
    $id = wp_insert_post([
        'post_title'     => $title,
        'post_content'   => paragraphs($words, 3, 5),
        'post_status'    => 'publish',
        'post_type'      => 'post',
        'post_author'    => 1,
        'post_date'      => gmdate('Y-m-d H:i:s', $ts),
        'post_date_gmt'  => gmdate('Y-m-d H:i:s', $ts),
        'post_category'  => array_values(array_unique($pc)),
        'tags_input'     => array_values(array_unique($tags)),
        'comment_status' => 'closed',
        'ping_status'    => 'closed',
    ], true);
    if (is_wp_error($id)) { fwrite(STDERR, $id->get_error_message() . "\n"); exit(1); }
}
wp_defer_term_counting(false);

foreach (['About', 'Contact', 'Archives Overview', 'Privacy Notice', 'Colophon'] as $k => $pt) {
    wp_insert_post([
        'post_title' => $pt, 'post_content' => paragraphs($words, 2, 4), 'post_status' => 'publish',
        'post_type' => 'page', 'post_author' => 1, 'menu_order' => $k,
        'comment_status' => 'closed', 'ping_status' => 'closed',
    ]);
}

bench_permalinks('/%year%/%monthnum%/%postname%/');
echo "theme: " . get_option('stylesheet') . "  version: " . $GLOBALS['wp_version'] . "\n";
echo "posts: " . wp_count_posts('post')->publish . "  pages: " . wp_count_posts('page')->publish .
     "  categories: " . wp_count_terms(['taxonomy' => 'category', 'hide_empty' => false]) .
     "  tags: " . wp_count_terms(['taxonomy' => 'post_tag', 'hide_empty' => false]) . "\n";
