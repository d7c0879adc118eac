<?php
/* What populate.php and setup.sh's permalink step both need: WordPress loaded from the php
 * command line as the site at http://127.0.0.1:8080/ (Debian's wordpress picks its config file
 * by host), and the permalink structure set with its rewrite rules flushed. */
$_SERVER['HTTP_HOST'] = '127.0.0.1:8080';
$_SERVER['SERVER_NAME'] = '127.0.0.1';
$_SERVER['SERVER_PORT'] = '8080';
$_SERVER['REQUEST_URI'] = '/';
define('WP_INSTALLING', true);
require '/usr/share/wordpress/wp-load.php';

function bench_permalinks(string $structure): void {
    $GLOBALS['wp_rewrite']->set_permalink_structure($structure);
    // taxonomies registered their rewrite permastructs at init, when the structure may still have been empty
    create_initial_taxonomies();
    $GLOBALS['wp_rewrite']->init();
    flush_rewrite_rules(false); // rules live in /etc/wordpress/htaccess; do not let WordPress write that file
}
