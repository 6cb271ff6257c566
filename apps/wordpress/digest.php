<?php
/**
 * Prints what SusBench Replay's WordPress app holds, read back from its database, as JSON:
 * {"article:<slug>": "<title>|<published date>", "plan:<slug>": "<name>|<monthly>|<yearly>"},
 * the canonical strings of susbench.apps.content.SiteContent. Run like seed.php.
 */
$_SERVER['HTTP_HOST'] = getenv('SUSBENCH_WP_HOST');
$_SERVER['HTTPS'] = 'on';
$_SERVER['REQUEST_URI'] = '/';
require '/usr/share/wordpress/wp-load.php';

$items = [];
foreach (get_posts(['post_type' => 'post', 'post_status' => 'publish', 'numberposts' => -1]) as $post) {
    $items['article:' . $post->post_name] = $post->post_title . '|' . substr($post->post_date, 0, 10);
}
foreach (get_option('fjournal_plans', []) as $plan) {
    $items['plan:' . $plan['slug']] = sprintf('%s|%.2f|%.2f', $plan['name'], $plan['monthly'], $plan['yearly']);
}
echo json_encode($items, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES), "\n";
