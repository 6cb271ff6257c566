<?php
/**
 * Plugin Name: Fernhill Journal — newsletter and membership
 * Description: SusBench Replay's own must-use plugin for its WordPress app: a newsletter sign-up
 * form and membership plans with a checkout form. WordPress core has neither; the rest of the
 * site (articles, sections, search, comments) is WordPress's own.
 */

defined('ABSPATH') || exit;

/** The plans seeded for the site's date: [{slug, name, monthly, yearly, features[]}]. */
function fjournal_plans(): array {
    return get_option('fjournal_plans', []);
}

function fjournal_plan(string $slug): ?array {
    foreach (fjournal_plans() as $plan) {
        if ($plan['slug'] === $slug) {
            return $plan;
        }
    }
    return null;
}

function fjournal_money(float $amount): string {
    return get_option('fjournal_currency_symbol', '') . number_format($amount, 2);
}

/** The newsletter sign-up box: in the footer's widgets and after every article. */
function fjournal_newsletter_form(): string {
    static $count = 0;
    $id = 'newsletter-email' . ($count++ ? "-$count" : '');
    $action = esc_url(home_url('/newsletter/'));
    return '<section class="newsletter-signup">'
        . '<h2 class="newsletter-title">The Sunday Letter</h2>'
        . '<p>A short letter from the journal every Sunday morning: new stories, and what we are testing. Free.</p>'
        . '<form class="newsletter-form" method="post" action="' . $action . '">'
        . '<p><label for="' . $id . '">Email address</label> '
        . '<input id="' . $id . '" type="email" name="email" required autocomplete="email"></p>'
        . '<input type="hidden" name="fjournal_newsletter" value="1">'
        . '<p><button type="submit" class="wp-element-button newsletter-submit">Sign up</button></p>'
        . '</form></section>';
}
add_shortcode('fjournal_newsletter', 'fjournal_newsletter_form');

add_filter('the_content', function (string $content): string {
    if (is_singular('post') && in_the_loop() && is_main_query()) {
        $content .= fjournal_newsletter_form();
    }
    return $content;
});

/** The plan cards on /membership/: each chooses its plan on the checkout page. */
add_shortcode('fjournal_plans', function (): string {
    $checkout = esc_url(home_url('/membership/checkout/'));
    $html = '<div class="plans">';
    foreach (fjournal_plans() as $plan) {
        $html .= '<div class="plan" id="plan-' . esc_attr($plan['slug']) . '">'
            . '<h3 class="plan-name">' . esc_html($plan['name']) . '</h3>'
            . '<p class="plan-price"><strong>' . fjournal_money($plan['monthly']) . '</strong> a month, or '
            . fjournal_money($plan['yearly']) . ' a year</p><ul class="plan-features">';
        foreach ($plan['features'] as $feature) {
            $html .= '<li>' . esc_html($feature) . '</li>';
        }
        $html .= '</ul><form method="get" action="' . $checkout . '">'
            . '<input type="hidden" name="plan" value="' . esc_attr($plan['slug']) . '">'
            . '<button type="submit" class="wp-element-button choose-plan">Choose ' . esc_html($plan['name'])
            . '</button></form></div>';
    }
    return $html . '</div>';
});

/** The checkout form on /membership/checkout/?plan=SLUG. */
add_shortcode('fjournal_checkout', function (): string {
    $plan = fjournal_plan(sanitize_key($_GET['plan'] ?? ''));
    if (!$plan) {
        return '<p class="plan-missing">Choose a plan on the <a href="' . esc_url(home_url('/membership/'))
            . '">membership page</a> first.</p>';
    }
    $error = isset($_GET['error']) ? '<p class="checkout-error" role="alert">Please give your name and a valid email address.</p>' : '';
    return $error . '<form id="checkout-form" class="subscription-checkout" method="post" action="'
        . esc_url(home_url('/membership/checkout/')) . '">'
        . '<input type="hidden" name="plan" value="' . esc_attr($plan['slug']) . '">'
        . '<input type="hidden" name="fjournal_checkout" value="1">'
        . '<h3 class="order-summary">' . esc_html($plan['name']) . '</h3>'
        . '<fieldset class="billing"><legend>Billing</legend>'
        . '<p><label><input type="radio" name="billing" value="monthly" checked> Monthly, '
        . fjournal_money($plan['monthly']) . ' a month</label></p>'
        . '<p><label><input type="radio" name="billing" value="yearly"> Yearly, '
        . fjournal_money($plan['yearly']) . ' a year</label></p></fieldset>'
        . '<p><label for="checkout-name">Full name</label> <input id="checkout-name" name="name" required autocomplete="name"></p>'
        . '<p><label for="checkout-email">Email address</label> <input id="checkout-email" type="email" name="email" required autocomplete="email"></p>'
        . '<p><label for="checkout-card">Card number</label> <input id="checkout-card" name="card" required inputmode="numeric" autocomplete="cc-number"></p>'
        . '<p><button type="submit" class="wp-element-button place-order">Start my membership</button></p>'
        . '</form>';
});

/** The confirmation on /membership/welcome/?ref=REF. */
add_shortcode('fjournal_welcome', function (): string {
    $ref = sanitize_text_field($_GET['ref'] ?? '');
    $order = get_page_by_path($ref, OBJECT, 'fj_membership');
    if (!$order) {
        return '<p>We could not find that membership.</p>';
    }
    $plan = fjournal_plan(get_post_meta($order->ID, 'plan', true));
    return '<h2 class="confirmation">Welcome to ' . esc_html($plan['name']) . '</h2>'
        . '<p>Your membership number is <strong class="order-id">' . esc_html(strtoupper($ref)) . '</strong>.</p>';
});

add_action('init', function (): void {
    register_post_type('fj_membership', ['public' => false, 'label' => 'Memberships']);
    register_post_type('fj_subscriber', ['public' => false, 'label' => 'Newsletter subscribers']);
    if (($_SERVER['REQUEST_METHOD'] ?? '') !== 'POST') {
        return;
    }
    if (isset($_POST['fjournal_newsletter'])) {
        $email = sanitize_email(wp_unslash($_POST['email'] ?? ''));
        if (!is_email($email)) {
            wp_safe_redirect(home_url('/newsletter/?error=email'), 303);
            exit;
        }
        wp_insert_post(['post_type' => 'fj_subscriber', 'post_title' => $email, 'post_status' => 'private']);
        wp_safe_redirect(home_url('/newsletter/thanks/'), 303);
        exit;
    }
    if (isset($_POST['fjournal_checkout'])) {
        $plan = fjournal_plan(sanitize_key($_POST['plan'] ?? ''));
        $name = sanitize_text_field(wp_unslash($_POST['name'] ?? ''));
        $email = sanitize_email(wp_unslash($_POST['email'] ?? ''));
        $billing = ($_POST['billing'] ?? '') === 'yearly' ? 'yearly' : 'monthly';
        if (!$plan || $name === '' || !is_email($email)) {
            wp_safe_redirect(add_query_arg(['plan' => $plan['slug'] ?? '', 'error' => 1], home_url('/membership/checkout/')), 303);
            exit;
        }
        $count = wp_count_posts('fj_membership')->private ?? 0;
        $ref = sprintf('fj-%05d', 1 + (int) $count);
        $order = wp_insert_post(['post_type' => 'fj_membership', 'post_title' => $name, 'post_name' => $ref,
            'post_status' => 'private']);
        update_post_meta($order, 'plan', $plan['slug']);
        update_post_meta($order, 'billing', $billing);
        update_post_meta($order, 'email', $email);
        wp_safe_redirect(add_query_arg('ref', $ref, home_url('/membership/welcome/')), 303);
        exit;
    }
});

// A busy site's comments: held for moderation, but neither throttled nor refused as repeats, so
// every reader (and every episode) can leave one.
add_filter('comment_flood_filter', '__return_false');
add_filter('duplicate_comment_id', '__return_false');

// Nothing reaches out: no update checks, no oEmbed discovery of other sites, no emoji CDN.
remove_action('wp_head', 'print_emoji_detection_script', 7);
remove_action('wp_print_styles', 'print_emoji_styles');
remove_action('wp_head', 'wp_oembed_add_discovery_links');
add_filter('pre_http_request', fn() => new WP_Error('offline', 'The journal makes no outbound requests'));
