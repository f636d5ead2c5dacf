//! The styles the terminal mode draws with, in one place.

use ratatui::style::{Color, Modifier, Style};

/// Every style the terminal mode uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    /// Plain answer text.
    pub text: Style,
    /// Secondary text: hints, the footer, thinking.
    pub dim: Style,
    /// The accent: prompts' marker, selections, links.
    pub accent: Style,
    /// Markdown headings.
    pub heading: Style,
    /// Inline code.
    pub code: Style,
    /// A code block's plain text (highlighted tokens are styled over it).
    pub code_block: Style,
    /// A code block's fence line (its language).
    pub code_fence: Style,
    /// Block quotes.
    pub quote: Style,
    /// List bullets and numbers.
    pub bullet: Style,
    /// Links.
    pub link: Style,
    /// Thinking, shown dimmed.
    pub thinking: Style,
    /// The user's own messages.
    pub user: Style,
    /// Errors.
    pub error: Style,
    /// Warnings and notices.
    pub warning: Style,
    /// Success marks.
    pub success: Style,
    /// A tool card's title.
    pub tool_title: Style,
    /// Added lines of a diff.
    pub diff_added: Style,
    /// Removed lines of a diff.
    pub diff_removed: Style,
    /// Context lines of a diff.
    pub diff_context: Style,
    /// Line numbers beside a diff.
    pub line_number: Style,
    /// Code tokens: keywords (`fn`, `if`, `return`).
    pub syntax_keyword: Style,
    /// Code tokens: string and character literals.
    pub syntax_string: Style,
    /// Code tokens: comments.
    pub syntax_comment: Style,
    /// Code tokens: function and method names, macros.
    pub syntax_function: Style,
    /// Code tokens: type names and constructors.
    pub syntax_type: Style,
    /// Code tokens: numbers.
    pub syntax_number: Style,
    /// Code tokens: constants and built-in values (`true`, `None`, `NULL`).
    pub syntax_constant: Style,
    /// Code tokens: fields and properties.
    pub syntax_property: Style,
    /// Code tokens: attributes, decorators and annotations.
    pub syntax_attribute: Style,
}

impl Default for Theme {
    fn default() -> Self {
        Theme {
            text: Style::new(),
            dim: Style::new().fg(Color::DarkGray),
            accent: Style::new().fg(Color::Cyan),
            heading: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            code: Style::new().fg(Color::Yellow),
            code_block: Style::new(),
            code_fence: Style::new().fg(Color::DarkGray),
            quote: Style::new().fg(Color::Gray).add_modifier(Modifier::ITALIC),
            bullet: Style::new().fg(Color::Cyan),
            link: Style::new()
                .fg(Color::Blue)
                .add_modifier(Modifier::UNDERLINED),
            thinking: Style::new()
                .fg(Color::DarkGray)
                .add_modifier(Modifier::ITALIC),
            user: Style::new().add_modifier(Modifier::BOLD),
            error: Style::new().fg(Color::Red),
            warning: Style::new().fg(Color::Yellow),
            success: Style::new().fg(Color::Green),
            tool_title: Style::new().add_modifier(Modifier::BOLD),
            diff_added: Style::new().fg(Color::Green),
            diff_removed: Style::new().fg(Color::Red),
            diff_context: Style::new().fg(Color::Gray),
            line_number: Style::new().fg(Color::DarkGray),
            syntax_keyword: Style::new().fg(Color::Magenta),
            syntax_string: Style::new().fg(Color::Green),
            syntax_comment: Style::new()
                .fg(Color::DarkGray)
                .add_modifier(Modifier::ITALIC),
            syntax_function: Style::new().fg(Color::Blue),
            syntax_type: Style::new().fg(Color::Yellow),
            syntax_number: Style::new().fg(Color::LightRed),
            syntax_constant: Style::new().fg(Color::LightRed),
            syntax_property: Style::new().fg(Color::Cyan),
            syntax_attribute: Style::new().fg(Color::LightMagenta),
        }
    }
}
