<?php
/**
 * Seeds SusBench Replay's WordPress app (the Fernhill Journal) from the project's generated content.
 * Run with PHP's CLI: php seed.php CONTENT.json, with SUSBENCH_WP_WEB, SUSBENCH_WP_HOST and WORDPRESS_CONFIG set.
 * CONTENT.json names the site, its categories, articles (with picture files) and plans. WordPress
 * is installed into an empty database first (wp_install), as its installer would.
 */
$_SERVER['HTTP_HOST'] = getenv('SUSBENCH_WP_HOST');
$_SERVER['HTTPS'] = 'on';
$_SERVER['REQUEST_URI'] = '/';
define('WP_INSTALLING', true);
require '/usr/share/wordpress/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-admin/includes/image.php';

/** Published as dated: WordPress would schedule a post dated after the machine's clock (a site date
 * ahead of today), and a scheduled post is not shown. */
function fjournal_publish(int $post_id): void {
    global $wpdb;
    $wpdb->update($wpdb->posts, ['post_status' => 'publish'], ['ID' => $post_id]);
    clean_post_cache($post_id);
}

$content = json_decode(file_get_contents($argv[1]), true, 64, JSON_THROW_ON_ERROR);
$site = $content['site'];

wp_install($site['title'], 'editor', 'editor@' . $site['host'], true, '', wp_generate_password(32), 'en_US');
// wp_install leaves a sample post, page and comment behind; a fresh site of ours has none.
foreach (get_posts(['post_type' => ['post', 'page'], 'post_status' => 'any', 'numberposts' => -1]) as $p) {
    wp_delete_post($p->ID, true);
}
wp_update_user(['ID' => 1, 'display_name' => $site['editor'], 'nickname' => $site['editor']]);

$options = [
    'blogdescription' => $site['tagline'],
    'timezone_string' => 'UTC',
    'date_format' => 'F j, Y',
    'posts_per_page' => 6,
    'default_comment_status' => 'open',
    'comment_moderation' => 1,
    'comments_notify' => 0,
    'moderation_notify' => 0,
    'show_avatars' => 0,
    'users_can_register' => 0,
    'blog_public' => 0,
    'uploads_use_yearmonth_folders' => 0,
    'fjournal_plans' => $content['plans'],
    'fjournal_site_date' => $site['date'],
    'fjournal_currency_symbol' => $site['currency_symbol'],
];
foreach ($options as $name => $value) {
    update_option($name, $value);
}
switch_theme($site['theme']);

global $wp_rewrite;
$wp_rewrite->set_permalink_structure('/%category%/%postname%/');
$wp_rewrite->set_category_base('section');

$uncategorized = get_term_by('slug', 'uncategorized', 'category');
$category_ids = [];
foreach ($content['categories'] as $category) {
    $term = wp_insert_term($category['name'], 'category', ['slug' => $category['slug'],
        'description' => $category['description']]);
    $category_ids[$category['slug']] = $term['term_id'];
}
update_option('default_category', $category_ids[$content['categories'][0]['slug']]);
wp_delete_term($uncategorized->term_id, 'category');

$authors = [];
foreach ($content['articles'] as $article) {
    $login = sanitize_user(strtolower(str_replace(' ', '.', $article['author'])));
    if (!isset($authors[$login])) {
        $authors[$login] = wp_insert_user(['user_login' => $login, 'user_pass' => wp_generate_password(32),
            'display_name' => $article['author'], 'role' => 'author',
            'user_email' => $login . '@' . $site['host']]);
    }
    $body = '';
    foreach ($article['paragraphs'] as $paragraph) {
        $body .= "<!-- wp:paragraph -->\n<p>" . esc_html($paragraph) . "</p>\n<!-- /wp:paragraph -->\n\n";
    }
    $post_id = wp_insert_post(wp_slash([
        'post_title' => $article['title'],
        'post_name' => $article['slug'],
        'post_excerpt' => $article['standfirst'],
        'post_content' => $body,
        'post_status' => 'publish',
        'post_author' => $authors[$login],
        'post_date' => $article['published'],
        'post_date_gmt' => $article['published'],
        'post_category' => [$category_ids[$article['category']]],
        'tags_input' => $article['tags'],
        'comment_status' => 'open',
    ]), true);
    if (is_wp_error($post_id)) {
        fwrite(STDERR, "article {$article['slug']}: " . $post_id->get_error_message() . "\n");
        exit(1);
    }
    fjournal_publish($post_id);
    $uploads = wp_upload_dir();
    $file = $uploads['path'] . '/' . $article['slug'] . '.png';
    copy($article['image'], $file);
    $attachment = wp_insert_attachment(['post_mime_type' => 'image/png', 'post_title' => $article['image_alt'],
        'post_status' => 'inherit', 'post_date' => $article['published'],
        'post_date_gmt' => $article['published']], $file, $post_id);
    update_post_meta($attachment, '_wp_attachment_image_alt', $article['image_alt']);
    wp_update_attachment_metadata($attachment, wp_generate_attachment_metadata($attachment, $file));
    set_post_thumbnail($post_id, $attachment);
}

foreach ($content['pages'] as $page) {
    $parent = isset($page['parent']) ? get_page_by_path($page['parent'])->ID : 0;
    $page_id = wp_insert_post(wp_slash(['post_type' => 'page', 'post_title' => $page['title'], 'post_name' => $page['slug'],
        'post_parent' => $parent, 'post_content' => $page['content'], 'post_status' => 'publish',
        'post_author' => 1, 'comment_status' => 'closed', 'post_date' => $site['date'] . ' 06:00:00',
        'post_date_gmt' => $site['date'] . ' 06:00:00']));
    fjournal_publish($page_id);
}

// The primary menu: the sections, then the membership page.
$menu = wp_create_nav_menu('Sections');
foreach ($content['categories'] as $category) {
    wp_update_nav_menu_item($menu, 0, ['menu-item-title' => $category['name'],
        'menu-item-object' => 'category', 'menu-item-object-id' => $category_ids[$category['slug']],
        'menu-item-type' => 'taxonomy', 'menu-item-status' => 'publish']);
}
wp_update_nav_menu_item($menu, 0, ['menu-item-title' => 'Membership',
    'menu-item-object' => 'page', 'menu-item-object-id' => get_page_by_path('membership')->ID,
    'menu-item-type' => 'post_type', 'menu-item-status' => 'publish']);
set_theme_mod('nav_menu_locations', ['primary' => $menu]);

// The footer's widgets: search, the newsletter sign-up, the sections.
update_option('widget_block', [
    2 => ['content' => '<!-- wp:search {"label":"Search the Post","buttonText":"Search"} /-->'],
    3 => ['content' => "<!-- wp:shortcode -->\n[fjournal_newsletter]\n<!-- /wp:shortcode -->"],
    4 => ['content' => '<!-- wp:categories /-->'],
    '_multiwidget' => 1,
]);
update_option('sidebars_widgets', ['wp_inactive_widgets' => [],
    'sidebar-1' => ['block-2', 'block-3', 'block-4'], 'array_version' => 3]);

flush_rewrite_rules(false);
echo "seeded " . count($content['articles']) . " articles\n";
