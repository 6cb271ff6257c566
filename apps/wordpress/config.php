<?php
/* SusBench Replay's WordPress app. Debian's wp-config.php loads this file as
 * /etc/wordpress/config-susbench-wordpress.php when the server sets WORDPRESS_CONFIG to
 * susbench-wordpress (`susbench apps install wordpress` puts it there). A running instance's own
 * settings (database socket, content folder, keys) are in its web folder, named by SUSBENCH_WP_WEB. */
$susbench_wp_web = $_SERVER['SUSBENCH_WP_WEB'] ?? getenv('SUSBENCH_WP_WEB');
if (!$susbench_wp_web || !is_file($susbench_wp_web . '/wp-instance.php')) {
    header('HTTP/1.0 503 Service Unavailable');
    echo 'SUSBENCH_WP_WEB does not name a running instance of the wordpress app';
    exit(1);
}
require $susbench_wp_web . '/wp-instance.php';
